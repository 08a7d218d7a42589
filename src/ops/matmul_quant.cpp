// Matmul kernels for GGUF's quantized weight types: integer dot products of the weights with
// activations quantized to int8 on the fly, in blocks of 32 (the grid i-quants and the ternary
// types: of 256, see grid_generic).
//
// Every type is brought, 64 values (a pair of 32-blocks) at a time, to one shape:
//   value = a[s] * u + b[s]    with u an unsigned byte, a and b per 16 values (slot s of 4)
// so one kernel serves all types: VPDPBUSD multiplies the u bytes with the int8 activations
// (16 lanes, each the sum of 4 products), the lanes are scaled by a[s] * (activation block scale)
// and accumulated in f32; the b terms are summed separately against each slot's activation sum.
// Each output has its own accumulators walked over the pairs in order, so its bits do not depend on
// the tile it is computed in, the batch or the thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/cpu.h"
#include "ops/isa_target.h"
#include "ops/matmul.h"
#include "ops/matmul_q8.h"
#include "ops/matmul_tile.h"
#include "quant/quant.h"
#include "quant/quant_iq.h"
#include "quant/quant_iq4.h"
#include "quant/quant_mxfp4.h"

namespace brisk::matmul_detail {

namespace {

// One block of N values to int8 (q) and its scale.
template <int N = 32>
float quantize_block(const float* x, int8_t* q) {
  float amax = 0;
  for (int i = 0; i < N; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  const float id = d > 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < N; ++i) q[i] = static_cast<int8_t>(std::lrintf(x[i] * id));
  return d;
}

int sum_bytes(const int8_t* q, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += q[i];
  return s;
}

// A Q8K row's sums of each 8 values, from its values (every tier's quantizer, so one place).
void q8k_sums(int64_t k, uint8_t* dst) {
  const Q8KLayout L(k);
  const auto* q = reinterpret_cast<const int8_t*>(dst);
  for (int64_t g = 0; g < k / 8; ++g) {
    const auto v = static_cast<int16_t>(sum_bytes(q + 8 * g, 8));
    std::memcpy(dst + L.s8_off + 2 * static_cast<uint64_t>(g), &v, 2);
  }
}

}  // namespace

#if defined(__x86_64__)
namespace {

// The largest of m's 8 lanes.
BRISK_INLINE(BRISK_ISA_AVX2) float max8(__m256 m) {
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  return _mm_cvtss_f32(_mm_max_ss(m4, _mm_movehdup_ps(m4)));
}
// The int32 values q packed to 32 bytes in order (packing works within 128-bit lanes; the
// permutation puts the 4-byte groups in order).
BRISK_INLINE(BRISK_ISA_AVX2) __m256i pack32(const __m256i (&q)[4]) {
  const __m256i q8 =
      _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
  return _mm256_permutevar8x32_epi32(q8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// quantize_activation_row's steps, 8 values at a time: the maximum is exact in any order, VCVTPS2DQ
// rounds to nearest even as lrintf does, and the sums are integers. One token's row was scalar
// before: in decode (one thread quantizes while the others wait) it took as long as the product
// with a 128-row matrix.
BRISK_TARGET(BRISK_ISA_AVX2)
void quantize_row_avx2(const float* x, int64_t k, uint8_t* dst, int offset) {
  const Q8Layout L(k);
  auto* qs = reinterpret_cast<int8_t*>(dst);
  auto* dxv = reinterpret_cast<float*>(dst + L.dxv_off);
  auto* xs = reinterpret_cast<float*>(dst + L.xs_off);
  auto* ms = reinterpret_cast<float*>(dst + L.ms_off);
  auto* hs = reinterpret_cast<int32_t*>(dst + L.hs_off);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t b = 0; b < L.np * 2; ++b) {
    const int64_t k0 = b * 32;
    float d = 0;
    __m256i q8 = _mm256_setzero_si256();
    int s[2] = {0, 0};
    if (k0 < k) {
      __m256 v[4];
      for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(x + k0 + 8 * i);
      __m256 m = _mm256_max_ps(
          _mm256_max_ps(_mm256_and_ps(v[0], abs_mask), _mm256_and_ps(v[1], abs_mask)),
          _mm256_max_ps(_mm256_and_ps(v[2], abs_mask), _mm256_and_ps(v[3], abs_mask)));
      d = max8(m) / 127.0f;
      const __m256 id = _mm256_set1_ps(d > 0 ? 1.0f / d : 0.0f);
      __m256i q[4];
      for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], id));
      for (int h = 0; h < 2; ++h) {
        const __m256i t = _mm256_add_epi32(q[2 * h], q[2 * h + 1]);
        __m128i t4 = _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
        t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0x4e));
        t4 = _mm_add_epi32(t4, _mm_shuffle_epi32(t4, 0xb1));
        s[h] = _mm_cvtsi128_si32(t4);
      }
      q8 = pack32(q);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + k0), q8);
    _mm256_storeu_ps(dxv + (b / 2) * 16 + (b % 2) * 8, _mm256_set1_ps(d));
    ms[b] = -(d * static_cast<float>(s[0] + s[1]));
    for (int h = 0; h < 2; ++h) xs[b * 2 + h] = d * static_cast<float>(s[h]);
    if (offset != 0)
      for (int h = 0; h < 2; ++h) hs[b * 2 + h] = -offset * s[h];
  }
}

// quantize_activation_q8k's steps, 8 values at a time (the same bits, as above).
BRISK_TARGET(BRISK_ISA_AVX2)
void quantize_q8k_avx2(const float* x, int64_t k, uint8_t* dst) {
  const Q8KLayout L(k);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t b = 0; b < L.nsb; ++b) {
    const float* xb = x + b * 256;
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < 32; ++i)
      m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(xb + 8 * i), abs_mask));
    const float d = max8(m) / 127.0f;
    const __m256 id = _mm256_set1_ps(d > 0 ? 1.0f / d : 0.0f);
    for (int s = 0; s < 8; ++s) {
      __m256i q[4];
      for (int i = 0; i < 4; ++i)
        q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 32 * s + 8 * i), id));
      const __m256i q8 = pack32(q);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + b * 256 + 32 * s), q8);
      // The sums of 8 while the values are in a register: VPSADBW of the bytes made unsigned
      // (+128 each), less 8 * 128; one 64-bit lane per 8 values, taken to int16.
      const __m256i sad = _mm256_sub_epi64(
          _mm256_sad_epu8(_mm256_xor_si256(q8, _mm256_set1_epi8(-128)), _mm256_setzero_si256()),
          _mm256_set1_epi64x(8 * 128));
      const __m256i s32 =
          _mm256_permutevar8x32_epi32(sad, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6));
      const __m128i s16 = _mm_packs_epi32(_mm256_castsi256_si128(s32), _mm256_castsi256_si128(s32));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + L.s8_off + 2 * (32 * b + 4 * s)), s16);
    }
    reinterpret_cast<float*>(dst + L.d_off)[b] = d;
  }
}

}  // namespace
#endif

void quantize_activation_q8k(Isa isa, const float* x, int64_t k, uint8_t* dst) {
#if defined(__x86_64__)
  if (isa >= Isa::Avx2) return quantize_q8k_avx2(x, k, dst);
#else
  (void)isa;
#endif
  quantize_activation_q8k(x, k, dst);
}

void quantize_activation_q8k(const float* x, int64_t k, uint8_t* dst) {
  const Q8KLayout L(k);
  for (int64_t b = 0; b < L.nsb; ++b)
    reinterpret_cast<float*>(dst + L.d_off)[b] =
        quantize_block<256>(x + b * 256, reinterpret_cast<int8_t*>(dst) + b * 256);
  q8k_sums(k, dst);
}

void quantize_activation_row(Isa isa, const float* x, int64_t k, uint8_t* dst, int offset) {
#if defined(__x86_64__)
  if (isa >= Isa::Avx2) return quantize_row_avx2(x, k, dst, offset);
#else
  (void)isa;
#endif
  quantize_activation_row(x, k, dst, offset);
}

void quantize_activation_row(const float* x, int64_t k, uint8_t* dst, int offset) {
  const Q8Layout L(k);
  auto* qs = reinterpret_cast<int8_t*>(dst);
  auto* dxv = reinterpret_cast<float*>(dst + L.dxv_off);
  auto* xs = reinterpret_cast<float*>(dst + L.xs_off);
  for (int64_t b = 0; b < L.np * 2; ++b) {
    const int64_t k0 = b * 32;
    float d = 0;
    if (k0 < k)
      d = quantize_block(x + k0, qs + k0);
    else
      std::fill(qs + k0, qs + k0 + 32, int8_t{0});
    for (int i = 0; i < 8; ++i) dxv[(b / 2) * 16 + (b % 2) * 8 + i] = d;
    reinterpret_cast<float*>(dst + L.ms_off)[b] = -(d * static_cast<float>(sum_bytes(qs + k0, 32)));
    for (int s = 0; s < 2; ++s)
      xs[b * 2 + s] = d * static_cast<float>(sum_bytes(qs + k0 + 16 * s, 16));
  }
  if (offset != 0) {
    auto* hs = reinterpret_cast<int32_t*>(dst + L.hs_off);
    for (int64_t h = 0; h < L.np * 4; ++h) hs[h] = -offset * sum_bytes(qs + 16 * h, 16);
  }
}

namespace {

// Where token t's blocks land in its tile: the tile and the token's place in it found once per
// token, each block's fields at fixed offsets from there.
struct TileSlots {
  uint8_t* tile;
  int64_t j, w;
  TileSlots(uint8_t* dst, int64_t k, int64_t n, int64_t t) {
    using T = Q8Tiles;
    const int64_t first = t / T::kTile * T::kTile;
    tile = dst + static_cast<uint64_t>(first / T::kTile) * T::tile_bytes(k);
    j = t - first;
    w = std::min<int64_t>(T::kTile, n - first);
  }
  uint8_t* block(int64_t b) const {
    return tile + static_cast<uint64_t>(b) * Q8Tiles::block_bytes(w);
  }
  int8_t* q(int64_t b) const { return reinterpret_cast<int8_t*>(block(b)) + j * 32; }
  // The block's scale and the sums of its values 0..15 (s0) and 16..31 (s1).
  void sums(int64_t b, float d, int s0, int s1, int offset) const {
    using T = Q8Tiles;
    uint8_t* blk = block(b);
    auto* hs = reinterpret_cast<int32_t*>(blk + T::hs_off(w)) + 2 * j;
    hs[0] = -offset * s0;
    hs[1] = -offset * s1;
    reinterpret_cast<int32_t*>(blk + T::hb_off(w))[j] = -offset * (s0 + s1);
    reinterpret_cast<float*>(blk + T::dx_off(w))[j] = d;
    reinterpret_cast<float*>(blk + T::ms_off(w))[j] = -(d * static_cast<float>(s0 + s1));
  }
};

#if defined(__x86_64__)
// The same steps as quantize_block, 16 values at a time: the maximum is exact in any order, and
// VCVTPS2DQ rounds to nearest even as lrintf does.
BRISK_TARGET(BRISK_ISA_AVX512)
void quantize_tiles_avx512(const float* x, int64_t ldx, int64_t k, int64_t n, int64_t t0,
                           int64_t t1, int offset, uint8_t* dst) {
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  for (int64_t t = t0; t < t1; ++t) {
    const TileSlots slots(dst, k, n, t);
    for (int64_t b = 0; b < k / 32; ++b) {
      const float* xb = x + t * ldx + b * 32;
      const __m512 v0 = _mm512_loadu_ps(xb), v1 = _mm512_loadu_ps(xb + 16);
      const float amax = _mm512_reduce_max_ps(
          _mm512_max_ps(_mm512_and_ps(v0, abs_mask), _mm512_and_ps(v1, abs_mask)));
      const float d = amax / 127.0f;
      const __m512 id = _mm512_set1_ps(d > 0 ? 1.0f / d : 0.0f);
      const __m512i q0 = _mm512_cvtps_epi32(_mm512_mul_ps(v0, id));
      const __m512i q1 = _mm512_cvtps_epi32(_mm512_mul_ps(v1, id));
      int8_t* q = slots.q(b);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q), _mm512_cvtepi32_epi8(q0));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 16), _mm512_cvtepi32_epi8(q1));
      slots.sums(b, d, _mm512_reduce_add_epi32(q0), _mm512_reduce_add_epi32(q1), offset);
    }
  }
}
#endif

}  // namespace

void quantize_activation_tiles([[maybe_unused]] Isa isa, const float* x, int64_t ldx, int64_t k,
                               int64_t n, int64_t t0, int64_t t1, int offset, uint8_t* dst) {
#if defined(__x86_64__)
  if (isa >= Isa::Avx512) return quantize_tiles_avx512(x, ldx, k, n, t0, t1, offset, dst);
#endif
  for (int64_t t = t0; t < t1; ++t) {
    const TileSlots slots(dst, k, n, t);
    for (int64_t b = 0; b < k / 32; ++b) {
      int8_t* q = slots.q(b);
      const float d = quantize_block(x + t * ldx + b * 32, q);
      slots.sums(b, d, sum_bytes(q, 16), sum_bytes(q + 16, 16), offset);
    }
  }
}

namespace {

#include "ops/matmul_quant_types-inl.h"

// Portable: the 256-bit kernel's arithmetic in scalar code, lane for lane. Lane l of 16 holds the
// sum of bytes 4l..4l+3's products, scaled by its slot's a (l / 4) times the activation block's
// scale and accumulated with a fused multiply-add; the lanes are summed as reduce16 does. So the
// AVX2 and AVX-VNNI tiers give these exact bits on any machine (tested), and Arm builds get the
// same results.
template <class P, int R, int T>
void micro_generic(const Args& a, int64_t r, int64_t t) {
  const Q8Layout L(a.k);
  const int64_t nb = a.k / 32;
  float acc[R][T][16] = {};
  thread_local std::vector<float> bbuf;
  bbuf.resize(static_cast<size_t>(R * L.np * 4));
  for (int64_t p = 0; p < L.np; ++p) {
    uint8_t u[R][64];
    float av[R][4];
    for (int i = 0; i < R; ++i)
      P::pair(a.w + (r + i) * a.w_stride, p, nb, u[i], av[i],
              &bbuf[static_cast<size_t>(i * L.np * 4 + p * 4)]);
    for (int j = 0; j < T; ++j) {
      const uint8_t* xr = a.x + (t + j) * a.x_stride;
      const auto* qx = reinterpret_cast<const int8_t*>(xr) + p * 64;
      const auto* dxv = reinterpret_cast<const float*>(xr + L.dxv_off) + p * 16;
      for (int i = 0; i < R; ++i)
        for (int l = 0; l < 16; ++l) {
          int32_t dot = 0;
          for (int b = 0; b < 4; ++b) dot += u[i][4 * l + b] * qx[4 * l + b];
          const float scale = av[i][l / 4] * dxv[l];
          acc[i][j][l] = std::fma(static_cast<float>(dot), scale, acc[i][j][l]);
        }
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) {
      const auto* xs = reinterpret_cast<const float*>(a.x + (t + j) * a.x_stride + L.xs_off);
      const float* bb = &bbuf[static_cast<size_t>(i * L.np * 4)];
      float bsum = 0;
      for (int64_t s = 0; s < L.np * 4; ++s) bsum += bb[s] * xs[s];
      a.y[(t + j) * a.ldy + r + i] = reduce16(acc[i][j]) + bsum;
    }
}

// The grid i-quants and the ternary types (XFormat::Q8K), in scalar code: per super-block the
// integer sum of S[g] * q * x (grid_step), for one row.
template <class B, int T>
[[gnu::noinline]] void grid_generic(const Args& a, int64_t r, int64_t t) {
  const Q8KLayout L(a.k);
  const B* w = reinterpret_cast<const B*>(a.w + r * a.w_stride);
  GridTokens<T> tok(a, t, L);
  for (int64_t sb = 0; sb < L.nsb; ++sb) {
    uint8_t S[16];
    iq_int_scales(w[sb], S);
    int8_t q[256];
    float unused[2];
    for (int ib = 0; ib < 8; ++ib) iq_decode32(w[sb], ib, q + 32 * ib, unused);
    int32_t sums[T] = {};
    for (int j = 0; j < T; ++j) {
      const int8_t* x = tok.block(j, sb);
      for (int g = 0; g < 16; ++g) {
        int32_t s = 0;
        for (int v = 16 * g; v < 16 * g + 16; ++v) s += q[v] * x[v];
        sums[j] += S[g] * s;
      }
    }
    tok.steps(sb, sums, iq_grid_d(w[sb]));
  }
  tok.store(a, r, t);
}

BRISK_QUANT_PICK(GenericPick, micro_generic, grid_generic);

}  // namespace

Kernel kernel_quant(Isa isa, DType t) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512) return kernel_quant_avx512(t);
  if (isa == Isa::Avx2Vnni) return kernel_quant_avxvnni(t);
  if (isa == Isa::Avx2) return kernel_quant_avx2(t);
#endif
  if (isa == Isa::Generic) return kernel_for_type<GenericPick>(t);
  return {nullptr, XFormat::Q8};
}

}  // namespace brisk::matmul_detail

bool brisk::grid_activations(DType t) {
  return matmul_detail::kernel_for_type<matmul_detail::GenericPick>(t).x_format ==
         matmul_detail::XFormat::Q8K;
}
