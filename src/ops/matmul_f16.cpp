// Matmul kernels for F16 weights: widened to f32 in registers (F16C), f32 activations.
#include "ops/matmul_widen-inl.h"

namespace brisk::matmul_detail {
namespace {

struct F16W {
  using T = uint16_t;
  static float scalar(T v) { return f16_to_f32(v); }
#if defined(__x86_64__)
  BRISK_TARGET_AVX2 static __m256 load8(const T* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  BRISK_TARGET_AVX512 static __m512 load16(const T* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  BRISK_TARGET_AVX512 static __m512 load16_masked(__mmask16 m, const T* p) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
#endif
};
using Widen = WidenKernels<F16W>;

}  // namespace

Kernel kernel_f16(Isa isa) {
  return Widen::pick(isa);
}

}  // namespace brisk::matmul_detail
