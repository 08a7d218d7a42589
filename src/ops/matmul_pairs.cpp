// Int8 kernels for Q4_0 and Q8_0 rows repacked at load time (ops/repack.h). A pair of blocks is one
// 32- or 64-byte load away from its 64 unsigned values, 16 block scales convert at once, and the
// weights' offset (8 or 128) is folded into the dot product by starting it from the activations'
// lane sums, so nothing is left to add afterwards. Per output: for each pair in order,
//   acc += float(dot(u, x) - offset * sum(x)) * (weight scale * activation scale)
// in 16 lanes, summed at the end: the same steps whatever the tile, batch or thread count.
#include <algorithm>
#include <vector>

#include "core/quant.h"
#include "ops/cpu.h"
#include "ops/matmul_q8.h"
#include "ops/matmul_tile.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace brisk::matmul_detail {
namespace {

constexpr int64_t kGroupPairs = 8;

struct Q4_0R {
  static constexpr int kPairBytes = 32;
  static constexpr int kOffset = 8;
  static void unpack(const uint8_t* v, uint8_t* u) {
    for (int j = 0; j < 32; ++j) u[j] = v[j] & 0xF, u[j + 32] = v[j] >> 4;
  }
#if defined(__x86_64__)
  __attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) static inline __m512i
  unpack512(const uint8_t* v) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
    const __m256i m = _mm256_set1_epi8(0x0F);
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(q, m)),
                              _mm256_and_si256(_mm256_srli_epi16(q, 4), m), 1);
  }
#endif
};

struct Q8_0R {
  static constexpr int kPairBytes = 64;
  static constexpr int kOffset = 128;
  static void unpack(const uint8_t* v, uint8_t* u) {
    for (int j = 0; j < 64; ++j) u[j] = static_cast<uint8_t>(v[j] ^ 0x80);
  }
#if defined(__x86_64__)
  __attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) static inline __m512i
  unpack512(const uint8_t* v) {
    return _mm512_xor_si512(_mm512_loadu_si512(v), _mm512_set1_epi8(static_cast<char>(0x80)));
  }
#endif
};

// Portable: the same arithmetic, a block (32 values) at a time.
template <class P, int R, int T>
void pairs_generic(const Args& a, int64_t r, int64_t t) {
  const Q8Layout L(a.k);
  const int64_t np = a.k / 64;
  float acc[R][T] = {};
  const uint8_t* w[R];
  for (int i = 0; i < R; ++i) w[i] = a.w + (r + i) * a.w_stride;
  for (int64_t g0 = 0; g0 < np; g0 += kGroupPairs) {
    const int64_t n = std::min(kGroupPairs, np - g0);
    for (int64_t q = 0; q < n; ++q) {
      const int64_t p = g0 + q;
      uint8_t u[R][64];
      float sc[R][2];
      for (int i = 0; i < R; ++i) {
        const auto* h = reinterpret_cast<const uint16_t*>(w[i]);
        sc[i][0] = f16_to_f32_fast(h[2 * q]);
        sc[i][1] = f16_to_f32_fast(h[2 * q + 1]);
        P::unpack(w[i] + 4 * n + q * P::kPairBytes, u[i]);
      }
      for (int j = 0; j < T; ++j) {
        const uint8_t* xr = a.x + (t + j) * a.x_stride;
        const auto* qx = reinterpret_cast<const int8_t*>(xr) + p * 64;
        const auto* dxv = reinterpret_cast<const float*>(xr + L.dxv_off) + p * 16;
        for (int i = 0; i < R; ++i)
          for (int h = 0; h < 2; ++h) {
            int32_t dot = 0;
            for (int l = 0; l < 32; ++l) dot += (u[i][h * 32 + l] - P::kOffset) * qx[h * 32 + l];
            acc[i][j] += static_cast<float>(dot) * (sc[i][h] * dxv[h * 8]);
          }
      }
    }
    for (int i = 0; i < R; ++i) w[i] += static_cast<uint64_t>(n) * (4 + P::kPairBytes);
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) a.y[(t + j) * a.ldy + r + i] = acc[i][j];
}

#if defined(__x86_64__)
template <class P, int R, int T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512dq,fma,f16c"))) void pairs_vnni(
    const Args& a, int64_t r, int64_t t) {
  const Q8Layout L(a.k);
  const int64_t np = a.k / 64;
  __m512 acc[R][T];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j] = _mm512_setzero_ps();
  const uint8_t* w[R];
  for (int i = 0; i < R; ++i) w[i] = a.w + (r + i) * a.w_stride;
  const uint8_t* qx[T];
  const float* dx[T];
  const int32_t* ls[T];
  for (int j = 0; j < T; ++j) {
    const uint8_t* xr = a.x + (t + j) * a.x_stride;
    qx[j] = xr;
    dx[j] = reinterpret_cast<const float*>(xr + L.dxv_off);
    ls[j] = reinterpret_cast<const int32_t*>(xr + L.ls_off);
  }
  for (int64_t g0 = 0; g0 < np; g0 += kGroupPairs) {
    const int64_t n = std::min(kGroupPairs, np - g0);
    __m512 sc[R];
    const __mmask16 hm = static_cast<__mmask16>((1u << (2 * n)) - 1);
    for (int i = 0; i < R; ++i) sc[i] = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(hm, w[i]));
    for (int64_t q = 0; q < n; ++q) {
      const int64_t p = g0 + q;
      // Lanes 0-7 take block 2q's scale, lanes 8-15 block 2q+1's.
      const __m512i idx =
          _mm512_add_epi32(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                           _mm512_set1_epi32(static_cast<int>(2 * q)));
      __m512i u[R];
      __m512 av[R];
      for (int i = 0; i < R; ++i) {
        u[i] = P::unpack512(w[i] + 4 * n + q * P::kPairBytes);
        av[i] = _mm512_permutexvar_ps(idx, sc[i]);
      }
      for (int j = 0; j < T; ++j) {
        const __m512i x = _mm512_loadu_si512(qx[j] + p * 64);
        const __m512 d = _mm512_loadu_ps(dx[j] + p * 16);
        const __m512i init = _mm512_loadu_si512(ls[j] + p * 16);
        for (int i = 0; i < R; ++i) {
          const __m512i dot = _mm512_dpbusd_epi32(init, u[i], x);
          acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(av[i], d), acc[i][j]);
        }
      }
    }
    for (int i = 0; i < R; ++i) w[i] += static_cast<uint64_t>(n) * (4 + P::kPairBytes);
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) a.y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
}
#endif

template <class P>
struct PairKernels {
  template <int R, int T>
  static void gen(const Args& a, int64_t r, int64_t t) {
    pairs_generic<P, R, T>(a, r, t);
  }
  static constexpr MicroFn kGeneric[4][4] = BRISK_MICRO_TABLE4(gen);
#if defined(__x86_64__)
  template <int R, int T>
  static void vnni(const Args& a, int64_t r, int64_t t) {
    pairs_vnni<P, R, T>(a, r, t);
  }
  static constexpr MicroFn kVnni[4][4] = BRISK_MICRO_TABLE4(vnni);
#endif
  static Kernel pick(Isa isa) {
#if defined(__x86_64__)
    if (isa == Isa::Avx512 && cpu_features().avx512vnni)
      return {tile_loop<4, kVnni>, XFormat::Q8, P::kOffset};
#endif
    if (isa == Isa::Generic) return {tile_loop<4, kGeneric>, XFormat::Q8, 0};
    return {nullptr, XFormat::Q8, 0};
  }
};

}  // namespace

Kernel kernel_pairs(Isa isa, DType t) {
  if (t == DType::Q4_0) return PairKernels<Q4_0R>::pick(isa);
  if (t == DType::Q8_0) return PairKernels<Q8_0R>::pick(isa);
  return {nullptr, XFormat::Q8, 0};
}

}  // namespace brisk::matmul_detail
