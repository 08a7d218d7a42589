// Int8 kernels for Q4_0 and Q8_0 matrices whose rows were interleaved in groups of 16 at load time
// (ops/repack.h). A 512-bit lane holds 4 consecutive weights of one row, so VPDPBUSD with 4
// broadcast activation bytes advances 16 rows at once; a block of 32 values takes 8 of them, after
// which one conversion and one multiply-add per token fold the block into the 16 outputs, scaled
// by (weight scale * activation scale). The weights' offset (8 or 128) is folded in by starting
// each block's integer sum from the activations' -offset * sum. Per output, for each block in
// order:
//   acc += float(sum_j (u_j - offset) * x_j) * (weight scale * activation scale)
// Integer sums are exact in any order, and the float steps are the same whatever the tile, batch
// or thread count, so an output's bits never depend on them.
#include <algorithm>

#include "core/quant.h"
#include "ops/cpu.h"
#include "ops/matmul_q8.h"
#include "ops/matmul_tile.h"
#include "ops/repack.h"

#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace brisk::matmul_detail {
namespace {

constexpr int kMaxT = 16;  // tokens per micro-tile

struct Q4_0I {
  static constexpr DType kType = DType::Q4_0;
  static constexpr int kOffset = 8;
#if defined(__x86_64__)
  __attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) static inline void unpack(
      const uint8_t* v, __m512i (&u)[8]) {
    const __m512i m = _mm512_set1_epi8(0x0F);
    for (int q = 0; q < 4; ++q) {
      const __m512i p = _mm512_loadu_si512(v + 64 * q);
      u[2 * q] = _mm512_and_si512(p, m);
      u[2 * q + 1] = _mm512_and_si512(_mm512_srli_epi16(p, 4), m);
    }
  }
#endif
};

struct Q8_0I {
  static constexpr DType kType = DType::Q8_0;
  static constexpr int kOffset = 128;
#if defined(__x86_64__)
  __attribute__((target("avx512f,avx512bw,avx512vnni"), always_inline)) static inline void unpack(
      const uint8_t* v, __m512i (&u)[8]) {
    const __m512i f = _mm512_set1_epi8(static_cast<char>(0x80));
    for (int m = 0; m < 8; ++m) u[m] = _mm512_xor_si512(_mm512_loadu_si512(v + 64 * m), f);
  }
#endif
};

// Activation scale of block b (the layout keeps 8 copies per block, pairs of blocks together).
inline const float* block_scale(const float* dxv, int64_t b) {
  return dxv + (b / 2) * 16 + (b % 2) * 8;
}

// Portable: the same arithmetic, one row and one block at a time.
template <class P, int T>
void interleaved_generic(const Args& a, int64_t r, int64_t t) {
  const Q8Layout L(a.k);
  const int64_t nb = a.k / 32;
  const uint64_t gb = group_block_bytes(P::kType);
  const uint8_t* g = a.w + r * a.w_stride;
  float acc[kInterleave][T] = {};
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* col = g + static_cast<uint64_t>(b) * gb;
    const auto* scales = reinterpret_cast<const uint16_t*>(col);
    const uint8_t* vals = col + 2 * kInterleave;
    for (int i = 0; i < kInterleave; ++i) {
      uint8_t u[32];
      for (int j = 0; j < 32; ++j) {
        if constexpr (P::kType == DType::Q4_0) {
          const uint8_t byte = vals[(j / 8) * 64 + i * 4 + j % 4];
          u[j] = j % 8 >= 4 ? byte >> 4 : byte & 0xF;
        } else {
          u[j] = static_cast<uint8_t>(vals[(j / 4) * 64 + i * 4 + j % 4] ^ 0x80);
        }
      }
      const float dw = f16_to_f32_fast(scales[i]);
      for (int j = 0; j < T; ++j) {
        const uint8_t* xr = a.x + (t + j) * a.x_stride;
        const auto* qx = reinterpret_cast<const int8_t*>(xr) + b * 32;
        int32_t dot = reinterpret_cast<const int32_t*>(xr + L.bs_off)[b];
        for (int l = 0; l < 32; ++l) dot += u[l] * qx[l];
        const float da = *block_scale(reinterpret_cast<const float*>(xr + L.dxv_off), b);
        acc[i][j] += static_cast<float>(dot) * (dw * da);
      }
    }
  }
  for (int j = 0; j < T; ++j)
    for (int i = 0; i < kInterleave; ++i) a.y[(t + j) * a.ldy + r + i] = acc[i][j];
}

#if defined(__x86_64__)
// acc += u . (the 4 activation bytes at p, in every lane), the bytes broadcast by the dot product's
// own memory operand: GCC 12 only emits a separate broadcast, which costs a vector slot as well.
using Int32Alias = int32_t __attribute__((may_alias, aligned(1)));
__attribute__((target("avx512f,avx512vnni"), always_inline)) inline __m512i dpbusd_bcast(
    __m512i acc, __m512i u, const int8_t* p) {
  asm("vpdpbusd %2%{1to16%}, %1, %0"
      : "+v"(acc)
      : "v"(u), "m"(*reinterpret_cast<const Int32Alias*>(p)));
  return acc;
}

template <class P, int T>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512dq,fma,f16c"))) void
interleaved_vnni(const Args& a, int64_t r, int64_t t) {
  const Q8Layout L(a.k);
  const int64_t nb = a.k / 32;
  const uint64_t gb = group_block_bytes(P::kType);
  const uint8_t* g = a.w + r * a.w_stride;
  const int8_t* qx[T];
  const float* dx[T];
  const int32_t* bs[T];
  __m512 acc[T];
  for (int j = 0; j < T; ++j) {
    const uint8_t* xr = a.x + (t + j) * a.x_stride;
    qx[j] = reinterpret_cast<const int8_t*>(xr);
    dx[j] = reinterpret_cast<const float*>(xr + L.dxv_off);
    bs[j] = reinterpret_cast<const int32_t*>(xr + L.bs_off);
    acc[j] = _mm512_setzero_ps();
  }
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* col = g + static_cast<uint64_t>(b) * gb;
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(col)));
    __m512i u[8];
    P::unpack(col + 2 * kInterleave, u);
#pragma GCC unroll 16
    for (int j = 0; j < T; ++j) {
      const int8_t* xb = qx[j] + b * 32;
      // Two chains of four (integer sums, so the split cannot change the result): shorter
      // dependency chains than one of eight, measurably faster even with many tokens in flight.
      __m512i s0 = _mm512_set1_epi32(bs[j][b]), s1 = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int m = 0; m < 8; m += 2) {
        s0 = dpbusd_bcast(s0, u[m], xb + 4 * m);
        s1 = dpbusd_bcast(s1, u[m + 1], xb + 4 * m + 4);
      }
      s0 = _mm512_add_epi32(s0, s1);
      const __m512 d = _mm512_mul_ps(dw, _mm512_set1_ps(*block_scale(dx[j], b)));
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s0), d, acc[j]);
    }
  }
  for (int j = 0; j < T; ++j) _mm512_storeu_ps(a.y + (t + j) * a.ldy + r, acc[j]);
}
#endif

using GroupFn = void (*)(const Args&, int64_t r, int64_t t);

// Groups of 16 rows (r0 and r1 are multiples of 16: see repackable and the driver's chunks), each
// over the tokens in micro-tiles of up to kMaxT.
template <const GroupFn* Table>
void group_loop(const Args& a, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  for (int64_t r = r0; r < r1; r += kInterleave)
    for (int64_t t = t0; t < t1; t += kMaxT) Table[std::min<int64_t>(kMaxT, t1 - t) - 1](a, r, t);
}

#define BRISK_T16(fn)                                                                              \
  {                                                                                                \
    fn<1>, fn<2>, fn<3>, fn<4>, fn<5>, fn<6>, fn<7>, fn<8>, fn<9>, fn<10>, fn<11>, fn<12>, fn<13>, \
        fn<14>, fn<15>, fn<16>                                                                     \
  }
static_assert(kMaxT == 16);

template <class P>
struct InterleavedKernels {
  template <int T>
  static void gen(const Args& a, int64_t r, int64_t t) {
    interleaved_generic<P, T>(a, r, t);
  }
  static constexpr GroupFn kGeneric[kMaxT] = BRISK_T16(gen);
#if defined(__x86_64__)
  template <int T>
  static void vnni(const Args& a, int64_t r, int64_t t) {
    interleaved_vnni<P, T>(a, r, t);
  }
  static constexpr GroupFn kVnni[kMaxT] = BRISK_T16(vnni);
#endif
  static Kernel pick(Isa isa) {
#if defined(__x86_64__)
    if (isa == Isa::Avx512 && cpu_features().avx512vnni)
      return {group_loop<kVnni>, XFormat::Q8, P::kOffset, kMaxT, 1};
#endif
    if (isa == Isa::Generic) return {group_loop<kGeneric>, XFormat::Q8, P::kOffset, kMaxT, 1};
    return {nullptr, XFormat::Q8, 0};
  }
};

}  // namespace

Kernel kernel_interleaved(Isa isa, DType t) {
  if (t == DType::Q4_0) return InterleavedKernels<Q4_0I>::pick(isa);
  if (t == DType::Q8_0) return InterleavedKernels<Q8_0I>::pick(isa);
  return {nullptr, XFormat::Q8, 0};
}

}  // namespace brisk::matmul_detail
