// Activations packed in tiles of tokens for the interleaved-row kernels (XFormat::F32Tiles,
// BF16Tiles, F32PairTiles): within a tile, the tokens' units (a float, a pair of bf16, or a pair of
// floats) are interleaved token by token, so a micro-kernel reads all its tokens from one pointer
// at fixed offsets. With AVX-512, 16 4-byte units of up to 16 tokens are moved at once through a
// 16x16 transpose.
#include <algorithm>
#include <cstring>

#include "core/dtype.h"
#include "ops/matmul.h"
#include "ops/simd_math-inl.h"

namespace brisk::matmul_detail {
namespace {

uint32_t unit(bool bf16, const float* x, int64_t u) {
  if (!bf16) {
    uint32_t v;
    std::memcpy(&v, x + u, 4);
    return v;
  }
  return f32_to_bf16(x[2 * u]) | static_cast<uint32_t>(f32_to_bf16(x[2 * u + 1])) << 16;
}

#if defined(__x86_64__)
// 16 floats to 16 bf16, rounded as f32_to_bf16 does (to nearest even; NaN stays a quiet NaN).
BRISK_TARGET(BRISK_ISA_AVX512) inline __m256i bf16x16(const float* p) {
  const __m512i u = _mm512_loadu_si512(p);
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)),
                                         _mm512_and_si512(_mm512_srli_epi32(u, 16), one)),
                        16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(_mm512_mask_mov_epi32(rounded, nan, quiet));
}

// Units [u, u + 16) of a token's row.
template <bool BF16>
BRISK_TARGET(BRISK_ISA_AVX512)
inline __m512 units16(const float* x, int64_t u) {
  if constexpr (!BF16) return _mm512_loadu_ps(x + u);
  return _mm512_castsi512_ps(
      _mm512_inserti64x4(_mm512_castsi256_si512(bf16x16(x + 2 * u)), bf16x16(x + 2 * u + 16), 1));
}

// Tokens [0, n) of a tile of `tile` (up to 16) tokens.
template <bool BF16>
BRISK_TARGET(BRISK_ISA_AVX512)
void pack_tile_avx512(const float* x, int64_t ldx, int64_t units, int64_t n, int64_t tile,
                      uint32_t* dst) {
  const int64_t u16 = units / 16 * 16;
  const __mmask16 lanes = static_cast<__mmask16>((1u << tile) - 1);
  for (int64_t u = 0; u < u16; u += 16) {
    if (tile == 1) {  // one token: its units in order
      _mm512_storeu_ps(dst + u, units16<BF16>(x, u));
      continue;
    }
    __m512 r[16], c[16];
    for (int j = 0; j < 16; ++j) r[j] = j < n ? units16<BF16>(x + j * ldx, u) : _mm512_setzero_ps();
    transpose16(r, c);
    for (int q = 0; q < 16; ++q) _mm512_mask_storeu_ps(dst + (u + q) * tile, lanes, c[q]);
  }
  for (int64_t u = u16; u < units; ++u)
    for (int64_t j = 0; j < n; ++j) dst[u * tile + j] = unit(BF16, x + j * ldx, u);
}
#endif

}  // namespace

void pack_tiles([[maybe_unused]] Isa isa, XFormat f, const float* x, int64_t ldx, int64_t k,
                int64_t n, int64_t tile, uint8_t* dst, ThreadPool& pool) {
  const bool bf16 = f == XFormat::BF16Tiles;
  const int64_t units = tile_units(f, k).count;
  const int64_t tiles = (n + tile - 1) / tile;
  pool.parallel_for(tiles, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const float* xt = x + b * tile * ldx;
      const int64_t nt = std::min(tile, n - b * tile);
      if (f == XFormat::F32PairTiles) {
        float* d = reinterpret_cast<float*>(dst) + b * tile * units * 2;
        for (int64_t j = 0; j < nt; ++j) {
          const float* xj = xt + j * ldx;
          for (int64_t u = 0; u < k / 2; ++u) std::memcpy(d + (u * tile + j) * 2, xj + 2 * u, 8);
          if (k % 2) d[(k / 2 * tile + j) * 2] = xj[k - 1], d[(k / 2 * tile + j) * 2 + 1] = 0.0f;
        }
        continue;
      }
      uint32_t* d = reinterpret_cast<uint32_t*>(dst) + b * tile * units;
#if defined(__x86_64__)
      if (isa >= Isa::Avx512 && tile <= 16) {
        if (bf16)
          pack_tile_avx512<true>(xt, ldx, units, nt, tile, d);
        else
          pack_tile_avx512<false>(xt, ldx, units, nt, tile, d);
        continue;
      }
#endif
      for (int64_t u = 0; u < units; ++u)
        for (int64_t j = 0; j < nt; ++j) d[u * tile + j] = unit(bf16, xt + j * ldx, u);
    }
  });
}

}  // namespace brisk::matmul_detail
