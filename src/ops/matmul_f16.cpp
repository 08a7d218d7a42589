// Matmul kernels for F16 weights: widened to f32 in registers (F16C), f32 activations.
#include "ops/matmul_widen-inl.h"
#include "ops/repack.h"

namespace brisk::matmul_detail {
namespace {

struct F16W {
  using T = uint16_t;
  static float scalar(T v) { return f16_to_f32(v); }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX2) static __m256 load8(const T* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 load16(const T* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 load16_masked(__mmask16 m, const T* p) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
#endif
};
using Widen = WidenKernels<F16W>;

// Rows interleaved in groups of 16 at load (ops/repack.h): a 32-byte column holds value k of 16
// rows, so one conversion serves up to 12 tokens and each FMA, with the token's activation
// broadcast from memory, advances 16 outputs; nothing is summed across lanes. Two accumulators
// per output (even and odd k, added at the end); the order depends only on k.

#if defined(__x86_64__)
// Units are floats: acc[j] += w * (token j's value), the FMA broadcasting it from memory.
struct F16Values {
  static constexpr int kValues = 1;
  static constexpr int kUnitBytes = 32;  // the 16 rows' unit in the group
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 weights(const uint8_t* g, int64_t u) {
    return _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + kUnitBytes * u)));
  }
  template <int J>
  BRISK_INLINE(BRISK_ISA_AVX512)
  static __m512 token(__m512 acc, __m512 w, const uint8_t* x) {
    return _mm512_fmadd_ps(w, _mm512_set1_ps(reinterpret_cast<const float*>(x)[J]), acc);
  }
};
// 256-bit: a column's 16 values are 32 bytes, half a column one VCVTPH2PS.
struct F16Halves {
  static constexpr int kColumnBytes = 32;  // value k of the group's 16 rows
  BRISK_INLINE(BRISK_ISA_AVX2) static __m256 one(const uint8_t* g, int64_t k, int h) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(g + kColumnBytes * k + 16 * h)));
  }
};
#else
struct F16Values {};
struct F16Halves {};
#endif

}  // namespace

Kernel kernel_f16_interleaved(Isa isa) {
  return InterleavedValues<F16W, F16Values, F16Halves>::pick(isa);
}

Kernel kernel_f16(Isa isa) {
  return Widen::pick(isa);
}

}  // namespace brisk::matmul_detail
