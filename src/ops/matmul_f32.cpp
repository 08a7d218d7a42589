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
// stream read once for up to kMaxT tokens (a verification pass, a small batch). Two accumulators
// per output (even and odd k, added at the end); the order depends only on k.
constexpr int kMaxT = kInterleavedMaxT;

#if defined(__x86_64__)
struct F32Values {
  static constexpr int kValues = 1;
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 weights(const uint8_t* g, int64_t u) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(g + 64 * u));
  }
  template <int J>
  BRISK_INLINE(BRISK_ISA_AVX512)
  static __m512 token(__m512 acc, __m512 w, const uint8_t* x) {
    return _mm512_fmadd_ps(w, _mm512_set1_ps(reinterpret_cast<const float*>(x)[J]), acc);
  }
};
template <int T>
void interleaved_avx512(const Args& a, int64_t r, int64_t t) {
  interleaved_tiles<F32Values, T>(a, r, t);
}

// 256-bit: half a column per vector.
struct F32Halves {
  BRISK_INLINE(BRISK_ISA_AVX2) static __m256 one(const uint8_t* g, int64_t k, int h) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(g + 64 * k + 32 * h));
  }
  BRISK_INLINE(BRISK_ISA_AVX2)
  static void pair(const uint8_t* g, int64_t k, int h, __m256& w0, __m256& w1) {
    w0 = one(g, k, h);
    w1 = one(g, k + 1, h);
  }
};
template <int T>
void interleaved_256(const Args& a, int64_t r, int64_t t) {
  interleaved_avx2<F32Halves, T>(a, r, t);
}
#endif

template <int T>
void generic_i(const Args& a, int64_t r, int64_t t) {
  interleaved_generic<F32W, 1, T>(a, r, t);
}
constexpr MicroFn kGenericI[kMaxT] = BRISK_T12(generic_i);
#if defined(__x86_64__)
constexpr MicroFn kAvx512I[kMaxT] = BRISK_T12(interleaved_avx512);
constexpr MicroFn kAvx2I[kInterleaved256MaxT] = {interleaved_256<1>, interleaved_256<2>};
#endif

}  // namespace

Kernel kernel_f32(Isa isa) {
  return Widen::pick(isa);
}

Kernel kernel_f32_interleaved(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512) return {group_loop<kMaxT, kAvx512I>, XFormat::F32Tiles, 0, kMaxT, 4};
  if (isa == Isa::Avx2)
    return {group_loop<kInterleaved256MaxT, kAvx2I>, XFormat::F32, 0, kInterleaved256MaxT, 4};
#endif
  if (isa == Isa::Generic) return {group_loop<kMaxT, kGenericI>, XFormat::F32, 0, kMaxT, 4};
  return {nullptr, XFormat::F32};
}

}  // namespace brisk::matmul_detail
