// Matmul kernels for F16 weights: widened to f32 in registers (F16C), f32 activations.
#include "ops/matmul_widen-inl.h"
#include "ops/repack.h"

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

// Rows interleaved in groups of 16 at load (ops/repack.h): a 32-byte column holds value k of 16
// rows, so one conversion serves up to kMaxT tokens and each FMA, with the token's activation
// broadcast from memory, advances 16 outputs; nothing is summed across lanes. Two accumulators
// per output (even and odd k, added at the end); the order depends only on k.
constexpr int kMaxT = kInterleavedMaxT;

#if defined(__x86_64__)
// Activations as XFormat::F32Tiles: tokens t.. of a tile (t is a multiple of the tile size here),
// so each broadcast is a constant offset from one pointer.
template <int T>
__attribute__((target("avx512f,avx512bw,avx512vl,fma,f16c"))) void interleaved_avx512(const Args& a,
                                                                                      int64_t r,
                                                                                      int64_t t) {
  const auto* g = reinterpret_cast<const __m256i*>(a.w + r * a.w_stride);  // a column each
  const int64_t step = a.x_tile;  // floats from one value of a token to its next
  const float* x = reinterpret_cast<const float*>(a.x + t / a.x_tile * a.x_stride) + t % a.x_tile;
  // Every loop over the accumulators is unrolled so they stay registers (see matmul_bf16.cpp).
  __m512 acc0[T], acc1[T];
#pragma GCC unroll 12
  for (int j = 0; j < T; ++j) acc0[j] = acc1[j] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 2 <= a.k; k += 2, x += 2 * step) {
    const __m512 w0 = _mm512_cvtph_ps(_mm256_loadu_si256(g + k));
    const __m512 w1 = _mm512_cvtph_ps(_mm256_loadu_si256(g + k + 1));
    const float* x1 = x + step;
#pragma GCC unroll 12
    for (int j = 0; j < T; ++j) {
      acc0[j] = _mm512_fmadd_ps(w0, _mm512_set1_ps(x[j]), acc0[j]);
      acc1[j] = _mm512_fmadd_ps(w1, _mm512_set1_ps(x1[j]), acc1[j]);
    }
  }
  if (k < a.k) {
    const __m512 w0 = _mm512_cvtph_ps(_mm256_loadu_si256(g + k));
#pragma GCC unroll 12
    for (int j = 0; j < T; ++j) acc0[j] = _mm512_fmadd_ps(w0, _mm512_set1_ps(x[j]), acc0[j]);
  }
#pragma GCC unroll 12
  for (int j = 0; j < T; ++j)
    _mm512_storeu_ps(a.y + (t + j) * a.ldy + r, _mm512_add_ps(acc0[j], acc1[j]));
}
#endif

template <int T>
void generic_i(const Args& a, int64_t r, int64_t t) {
  interleaved_generic<F16W, 1, T>(a, r, t);
}
constexpr MicroFn kGenericI[kMaxT] = BRISK_T12(generic_i);
#if defined(__x86_64__)
constexpr MicroFn kAvx512I[kMaxT] = BRISK_T12(interleaved_avx512);
#endif

}  // namespace

Kernel kernel_f16_interleaved(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512) return {group_loop<kMaxT, kAvx512I>, XFormat::F32Tiles, 0, kMaxT, 4};
#endif
  if (isa == Isa::Generic) return {group_loop<kMaxT, kGenericI>, XFormat::F32, 0, kMaxT, 4};
  return {nullptr, XFormat::F32};
}

Kernel kernel_f16(Isa isa) {
  return Widen::pick(isa);
}

}  // namespace brisk::matmul_detail
