#include "ops/activation.h"

#include <cmath>

#include "ops/cpu.h"
#include "ops/simd_math-inl.h"

namespace brisk {
namespace {

#if defined(__x86_64__)
BRISK_TARGET(BRISK_ISA_AVX512)
void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        n - i >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
    const __m512 s = _mm512_div_ps(g, _mm512_add_ps(one, e));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, up + i)));
  }
}
#endif

void silu_mul_generic(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  using Fn = void (*)(const float*, const float*, float*, int64_t);
#if defined(__x86_64__)
  static const Fn fn = best_isa() >= Isa::Avx512 ? silu_mul_avx512 : silu_mul_generic;
#else
  static const Fn fn = silu_mul_generic;
#endif
  fn(gate, up, out, n);
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  float m = x[0];
  for (int64_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
  float sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - m);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace brisk
