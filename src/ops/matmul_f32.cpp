// Matmul kernels for F32 weights.
#include "ops/matmul_widen-inl.h"

namespace brisk::matmul_detail {
namespace {

struct F32W {
  using T = float;
  static float scalar(T v) { return v; }
#if defined(__x86_64__)
  BRISK_TARGET_AVX2 static __m256 load8(const T* p) {
    return _mm256_loadu_ps(p);
  }
  BRISK_TARGET_AVX512 static __m512 load16(const T* p) {
    return _mm512_loadu_ps(p);
  }
  BRISK_TARGET_AVX512 static __m512 load16_masked(__mmask16 m, const T* p) {
    return _mm512_maskz_loadu_ps(m, p);
  }
#endif
};
using Widen = WidenKernels<F32W>;

}  // namespace

Kernel kernel_f32(Isa isa) {
  switch (isa) {
#if defined(__x86_64__)
    case Isa::Avx512:
      return {tile_loop<3, Widen::kAvx512>, XFormat::F32};
    case Isa::Avx2:
      return {tile_loop<6, Widen::kAvx2>, XFormat::F32};
#endif
    case Isa::Generic:
      return {tile_loop<6, Widen::kGeneric>, XFormat::F32};
    default:
      return {nullptr, XFormat::F32};
  }
}

}  // namespace brisk::matmul_detail
