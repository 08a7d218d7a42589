// Matmul kernels for F16 weights: converted to f32 in registers, f32 activations.
// GCC 12 reports its own AVX-512 intrinsic headers as using uninitialized values.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "ops/matmul_tile.h"

namespace brisk::matmul_detail {
namespace {

template <int R, int T>
void micro_generic(const Args& a, int64_t r, int64_t t) {
  float acc[R][T][16] = {};
  const uint16_t* w[R];
  const float* x[T];
  for (int i = 0; i < R; ++i) w[i] = reinterpret_cast<const uint16_t*>(a.w + (r + i) * a.w_stride);
  for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.x + (t + j) * a.x_stride);
  for (int64_t k0 = 0; k0 < a.k; k0 += 16) {
    const int n = static_cast<int>(std::min<int64_t>(16, a.k - k0));
    float wv[R][16];
    for (int i = 0; i < R; ++i)
      for (int l = 0; l < n; ++l) wv[i][l] = f16_to_f32(w[i][k0 + l]);
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < T; ++j)
        for (int l = 0; l < n; ++l) acc[i][j][l] += wv[i][l] * x[j][k0 + l];
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) a.y[(t + j) * a.ldy + r + i] = reduce16(acc[i][j]);
}

#if defined(__x86_64__)
// One k-step of a micro-tile into accumulator set S; Masked reads only the first bits of m.
template <int R, int T, int S, bool Masked>
__attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"), always_inline)) inline void step_avx512(
    __m512 (&acc)[R][T][2], const uint16_t* const (&w)[R], const float* const (&x)[T], int64_t K, __mmask16 m) {
  __m512 wv[R];
  for (int i = 0; i < R; ++i) wv[i] = Masked ? _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, w[i] + K)) : _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i] + K)));
  for (int j = 0; j < T; ++j) {
    const __m512 xv = Masked ? _mm512_maskz_loadu_ps(m, x[j] + K) : _mm512_loadu_ps(x[j] + K);
    for (int i = 0; i < R; ++i) acc[i][j][S] = _mm512_fmadd_ps(wv[i], xv, acc[i][j][S]);
  }
}

// Two accumulators per output take alternate 16-element steps, halving the FMA latency chain so
// decode runs at memory speed. The split depends only on k, never on the tile size.
template <int R, int T>
__attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) void micro_avx512(const Args& a, int64_t r, int64_t t) {
  __m512 acc[R][T][2];
  const uint16_t* w[R];
  const float* x[T];
  for (int i = 0; i < R; ++i) w[i] = reinterpret_cast<const uint16_t*>(a.w + (r + i) * a.w_stride);
  for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.x + (t + j) * a.x_stride);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j][0] = acc[i][j][1] = _mm512_setzero_ps();
  int64_t k0 = 0;
  for (; k0 + 32 <= a.k; k0 += 32) {
    step_avx512<R, T, 0, false>(acc, w, x, k0, 0);
    step_avx512<R, T, 1, false>(acc, w, x, k0 + 16, 0);
  }
  const bool odd = k0 + 16 <= a.k;
  if (odd) step_avx512<R, T, 0, false>(acc, w, x, k0, 0), k0 += 16;
  if (k0 < a.k) {
    const __mmask16 m = static_cast<__mmask16>((1u << (a.k - k0)) - 1);
    if (odd) step_avx512<R, T, 1, true>(acc, w, x, k0, m);
    else step_avx512<R, T, 0, true>(acc, w, x, k0, m);
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j)
      a.y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(_mm512_add_ps(acc[i][j][0], acc[i][j][1]));
}

template <int R, int T>
__attribute__((target("avx2,fma,f16c"))) void micro_avx2(const Args& a, int64_t r, int64_t t) {
  __m256 acc[R][T];
  const uint16_t* w[R];
  const float* x[T];
  for (int i = 0; i < R; ++i) w[i] = reinterpret_cast<const uint16_t*>(a.w + (r + i) * a.w_stride);
  for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const float*>(a.x + (t + j) * a.x_stride);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j] = _mm256_setzero_ps();
  int64_t k0 = 0;
  for (; k0 + 8 <= a.k; k0 += 8) {
    __m256 wv[R];
    for (int i = 0; i < R; ++i)
      wv[i] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i] + k0)));
    for (int j = 0; j < T; ++j) {
      const __m256 xv = _mm256_loadu_ps(x[j] + k0);
      for (int i = 0; i < R; ++i) acc[i][j] = _mm256_fmadd_ps(wv[i], xv, acc[i][j]);
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) {
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, acc[i][j]);
      float s = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
      for (int64_t kk = k0; kk < a.k; ++kk) s += _cvtsh_ss(w[i][kk]) * x[j][kk];
      a.y[(t + j) * a.ldy + r + i] = s;
    }
}

constexpr MicroFn kAvx512[4][3] = BRISK_MICRO_TABLE3(micro_avx512);
constexpr MicroFn kAvx2[4][6] = BRISK_MICRO_TABLE(micro_avx2);
#endif
constexpr MicroFn kGeneric[4][6] = BRISK_MICRO_TABLE(micro_generic);

}  // namespace

Kernel kernel_f16(Isa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case Isa::Avx512: return {tile_loop<3, kAvx512>, XFormat::F32};
    case Isa::Avx2: return {tile_loop<6, kAvx2>, XFormat::F32};
#endif
    case Isa::Generic: return {tile_loop<6, kGeneric>, XFormat::F32};
    default: return {nullptr, XFormat::F32};
  }
}

}  // namespace brisk::matmul_detail
