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

// Rows interleaved in groups of 16 at load (ops/repack.h), as for F16: a 64-byte column holds
// value k of 16 rows, one FMA per token advances all 16 outputs, and the group is one sequential
// stream read once for up to 12 tokens (a verification pass, a small batch). Two accumulators
// per output (even and odd k, added at the end); the order depends only on k.

#if defined(__x86_64__)
struct F32Values {
  static constexpr int kValues = 1;
  static constexpr int kUnitBytes = 64;  // the 16 rows' unit in the group
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 weights(const uint8_t* g, int64_t u) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(g + kUnitBytes * u));
  }
  template <int J>
  BRISK_INLINE(BRISK_ISA_AVX512)
  static __m512 token(__m512 acc, __m512 w, const uint8_t* x) {
    return _mm512_fmadd_ps(w, _mm512_set1_ps(reinterpret_cast<const float*>(x)[J]), acc);
  }
};
// 256-bit: half a column per vector.
struct F32Halves {
  static constexpr int kColumnBytes = 64;  // value k of the group's 16 rows
  BRISK_INLINE(BRISK_ISA_AVX2) static __m256 one(const uint8_t* g, int64_t k, int h) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(g + kColumnBytes * k + 32 * h));
  }
};
#else
struct F32Values {};
struct F32Halves {};
#endif

}  // namespace

Kernel kernel_f32(Isa isa) {
  return Widen::pick(isa);
}

Kernel kernel_f32_interleaved(Isa isa) {
  return InterleavedValues<F32W, F32Values, F32Halves>::pick(isa);
}

}  // namespace brisk::matmul_detail
