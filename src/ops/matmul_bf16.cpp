// Matmul kernels for BF16 weights. With AVX512-BF16 the activations are rounded to bf16 and
// multiplied with VDPBF16PS (two products per lane per instruction, twice FP32 FMA's rate); other
// ISAs widen the weights to f32.
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
      for (int l = 0; l < n; ++l) wv[i][l] = bf16_to_f32(w[i][k0 + l]);
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
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"), always_inline)) inline void step_avx512(
    __m512 (&acc)[R][T][2], const uint16_t* const (&w)[R], const uint16_t* const (&x)[T], int64_t K, __mmask32 m) {
  __m512i wv[R];
  for (int i = 0; i < R; ++i) wv[i] = Masked ? _mm512_maskz_loadu_epi16(m, w[i] + K) : _mm512_loadu_si512(w[i] + K);
  for (int j = 0; j < T; ++j) {
    const __m512i xv = Masked ? _mm512_maskz_loadu_epi16(m, x[j] + K) : _mm512_loadu_si512(x[j] + K);
    for (int i = 0; i < R; ++i) acc[i][j][S] =
            _mm512_dpbf16_ps(acc[i][j][S], reinterpret_cast<__m512bh>(wv[i]), reinterpret_cast<__m512bh>(xv));
  }
}

// x rows are bf16, zero-padded to a multiple of 32 elements by the driver.
// Two accumulators per output take alternate 32-element steps, halving the FMA latency chain so
// decode runs at memory speed. The split depends only on k, never on the tile size.
template <int R, int T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16"))) void micro_avx512(const Args& a, int64_t r, int64_t t) {
  __m512 acc[R][T][2];
  const uint16_t* w[R];
  const uint16_t* x[T];
  for (int i = 0; i < R; ++i) w[i] = reinterpret_cast<const uint16_t*>(a.w + (r + i) * a.w_stride);
  for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const uint16_t*>(a.x + (t + j) * a.x_stride);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j][0] = acc[i][j][1] = _mm512_setzero_ps();
  int64_t k0 = 0;
  for (; k0 + 64 <= a.k; k0 += 64) {
    step_avx512<R, T, 0, false>(acc, w, x, k0, 0);
    step_avx512<R, T, 1, false>(acc, w, x, k0 + 32, 0);
  }
  const bool odd = k0 + 32 <= a.k;
  if (odd) step_avx512<R, T, 0, false>(acc, w, x, k0, 0), k0 += 32;
  if (k0 < a.k) {
    const __mmask32 m = static_cast<__mmask32>((uint64_t{1} << (a.k - k0)) - 1);
    if (odd) step_avx512<R, T, 1, true>(acc, w, x, k0, m);
    else step_avx512<R, T, 0, true>(acc, w, x, k0, m);
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j)
      a.y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(_mm512_add_ps(acc[i][j][0], acc[i][j][1]));
}

template <int R, int T>
__attribute__((target("avx2,fma"))) void micro_avx2(const Args& a, int64_t r, int64_t t) {
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
    for (int i = 0; i < R; ++i) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i] + k0));
      wv[i] = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
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
      for (int64_t kk = k0; kk < a.k; ++kk) s += bf16_to_f32(w[i][kk]) * x[j][kk];
      a.y[(t + j) * a.ldy + r + i] = s;
    }
}

constexpr MicroFn kAvx512[4][3] = BRISK_MICRO_TABLE3(micro_avx512);
constexpr MicroFn kAvx2[4][6] = BRISK_MICRO_TABLE(micro_avx2);
#endif
constexpr MicroFn kGeneric[4][6] = BRISK_MICRO_TABLE(micro_generic);

}  // namespace

Kernel kernel_bf16(Isa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case Isa::Avx512: return {tile_loop<3, kAvx512>, XFormat::BF16};
    case Isa::Avx2: return {tile_loop<6, kAvx2>, XFormat::F32};
#endif
    case Isa::Generic: return {tile_loop<6, kGeneric>, XFormat::F32};
    default: return {nullptr, XFormat::F32};
  }
}

}  // namespace brisk::matmul_detail
