// Matmul kernels for F32 weights.
#include "ops/matmul_widen-inl.h"

namespace brisk::matmul_detail {
namespace {

struct F32W {
  using T = float;
  static float scalar(T v) { return v; }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX2) static __m256 load8(const T* p) {
    return _mm256_loadu_ps(p);
  }
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 load16(const T* p) {
    return _mm512_loadu_ps(p);
  }
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 load16_masked(__mmask16 m, const T* p) {
    return _mm512_maskz_loadu_ps(m, p);
  }
#endif
};
using Widen = WidenKernels<F32W>;

}  // namespace

Kernel kernel_f32(Isa isa) {
  return Widen::pick(isa);
}

}  // namespace brisk::matmul_detail
