// Matmul kernels for BF16 weights. With AVX512-BF16 the activations are rounded to bf16 and
// multiplied with VDPBF16PS (two products per lane per instruction, twice FP32 FMA's rate); other
// ISAs widen the weights to f32.
#include "ops/matmul_widen-inl.h"
#include "ops/repack.h"

namespace brisk::matmul_detail {
namespace {

struct BF16W {
  using T = uint16_t;
  static float scalar(T v) { return bf16_to_f32(v); }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX2) static __m256 load8(const T* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  // AVX-512 without BF16 instructions: exact widening to f32, then FP32 FMAs.
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 load16(const T* p) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 load16_masked(__mmask16 m, const T* p) {
    return _mm512_castsi512_ps(
        _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16));
  }
#endif
};
using Widen = WidenKernels<BF16W>;

#if defined(__x86_64__)
// One k-step of a micro-tile into accumulator set S; Masked reads only the first bits of m.
template <int R, int T, int S, bool Masked>
BRISK_INLINE(BRISK_ISA_AVX512BF16)
void step_dpbf16(__m512 (&acc)[R][T][2], const uint16_t* const (&w)[R],
                 const uint16_t* const (&x)[T], int64_t K, __mmask32 m) {
  __m512i wv[R];
  for (int i = 0; i < R; ++i)
    wv[i] = Masked ? _mm512_maskz_loadu_epi16(m, w[i] + K) : _mm512_loadu_si512(w[i] + K);
  for (int j = 0; j < T; ++j) {
    const __m512i xv =
        Masked ? _mm512_maskz_loadu_epi16(m, x[j] + K) : _mm512_loadu_si512(x[j] + K);
    for (int i = 0; i < R; ++i)
      acc[i][j][S] = _mm512_dpbf16_ps(acc[i][j][S], reinterpret_cast<__m512bh>(wv[i]),
                                      reinterpret_cast<__m512bh>(xv));
  }
}

// x rows are bf16, zero-padded to a multiple of 32 elements by the driver.
// Two accumulators per output take alternate 32-element steps, halving the FMA latency chain so
// decode runs at memory speed. The split depends only on k, never on the tile size.
template <int R, int T>
BRISK_TARGET(BRISK_ISA_AVX512BF16)
void micro_dpbf16(const Args& a, int64_t r, int64_t t) {
  __m512 acc[R][T][2];
  const uint16_t* w[R];
  const uint16_t* x[T];
  for (int i = 0; i < R; ++i) w[i] = reinterpret_cast<const uint16_t*>(a.w + (r + i) * a.w_stride);
  for (int j = 0; j < T; ++j) x[j] = reinterpret_cast<const uint16_t*>(a.x + (t + j) * a.x_stride);
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j][0] = acc[i][j][1] = _mm512_setzero_ps();
  int64_t k0 = 0;
  for (; k0 + 64 <= a.k; k0 += 64) {
    step_dpbf16<R, T, 0, false>(acc, w, x, k0, 0);
    step_dpbf16<R, T, 1, false>(acc, w, x, k0 + 32, 0);
  }
  const bool odd = k0 + 32 <= a.k;
  if (odd) step_dpbf16<R, T, 0, false>(acc, w, x, k0, 0), k0 += 32;
  if (k0 < a.k) {
    const __mmask32 m = static_cast<__mmask32>((uint64_t{1} << (a.k - k0)) - 1);
    if (odd)
      step_dpbf16<R, T, 1, true>(acc, w, x, k0, m);
    else
      step_dpbf16<R, T, 0, true>(acc, w, x, k0, m);
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j)
      a.y[(t + j) * a.ldy + r + i] =
          _mm512_reduce_add_ps(_mm512_add_ps(acc[i][j][0], acc[i][j][1]));
}

constexpr MicroFn kAvx512[4][3] = BRISK_MICRO_TABLE3(micro_dpbf16);
#endif

// Rows interleaved in groups of 16 at load (ops/repack.h): a vector holds a pair of values of each
// of 16 rows, so one VDPBF16PS with a token's pair of activations broadcast from memory advances 16
// outputs, the weights are loaded once for up to kMaxT tokens, and nothing is summed across lanes.
// Two accumulators per output (even and odd pairs, added at the end) keep decode off the latency
// chain; the order depends only on k.
constexpr int kMaxT = kInterleavedMaxT;

#if defined(__x86_64__)
// Units are pairs of bf16: acc[j] += w . (token j's pair), by VDPBF16PS with the pair broadcast by
// the instruction's own memory operand at a constant offset (GCC 12 emits a separate broadcast for
// the intrinsic, which costs a vector slot, and computes an address per token).
struct Bf16Pairs {
  static constexpr int kValues = 2;
  static constexpr int kUnitBytes = 64;  // the 16 rows' unit in the group
  BRISK_INLINE(BRISK_ISA_AVX512) static __m512 weights(const uint8_t* g, int64_t u) {
    return _mm512_loadu_ps(g + kUnitBytes * u);
  }
  template <int J>
  BRISK_INLINE(BRISK_ISA_AVX512)
  static __m512 token(__m512 acc, __m512 w, const uint8_t* x) {
    asm("vdpbf16ps %c3(%2)%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "r"(x), "i"(J * 4));
    return acc;
  }
};
template <int T>
void interleaved_dpbf16(const Args& a, int64_t r, int64_t t) {
  interleaved_tiles<Bf16Pairs, T>(a, r, t);
}

// 256-bit, without BF16 instructions: 32 bytes hold a pair of values of 8 rows; interleaving each
// 128-bit lane's words with zeros below gives rows {0, 1, 4, 5}'s pairs as f32, and {2, 3, 6, 7}'s.
struct Bf16Halves {
  static constexpr int kColumnBytes = 32;  // per value of the group's 16 rows
  BRISK_INLINE(BRISK_ISA_AVX2)
  static void pairs(const uint8_t* g, int64_t k, int h, __m256& lo, __m256& hi) {
    const __m256i p =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g + kColumnBytes * k + 32 * h));
    const __m256i z = _mm256_setzero_si256();
    lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, p));
    hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, p));
  }
};
#endif

template <int T>
void generic_i(const Args& a, int64_t r, int64_t t) {
  interleaved_generic<BF16W, 2, T>(a, r, t);
}
constexpr MicroFn kGenericI[kMaxT] = BRISK_T12(generic_i);
#if defined(__x86_64__)
constexpr MicroFn kDpbf16I[kMaxT] = BRISK_T12(interleaved_dpbf16);
#endif

}  // namespace

Kernel kernel_bf16_interleaved(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512Bf16)
    return {group_loop_decode<kMaxT, kDpbf16I, Bf16Pairs>,
            XFormat::BF16Tiles,
            0,
            kMaxT,
            2,
            16 * kDecodeGroups};
  if (isa == Isa::Avx2) return Interleaved256<Bf16Halves>::kernel();
#endif
  if (isa == Isa::Generic) return {group_loop<kMaxT, kGenericI>, XFormat::F32, 0, kMaxT, 4};
  return {nullptr, XFormat::F32};
}

Kernel kernel_bf16(Isa isa) {
#if defined(__x86_64__)
  if (isa == Isa::Avx512Bf16) return {tile_loop<3, kAvx512>, XFormat::BF16};
#endif
  return Widen::pick(isa);
}

}  // namespace brisk::matmul_detail
