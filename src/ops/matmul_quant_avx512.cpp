// The 512-bit tier of the integer kernels for GGUF's quantized types (matmul_quant.cpp describes
// them): VPDPBUSD over 64 u bytes of a row at a time. A file of its own so that its kernels, one
// per type and micro-tile shape, compile beside the other tiers'.

#if defined(__x86_64__)

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/cpu.h"
#include "ops/isa_target.h"
#include "ops/matmul.h"
#include "ops/matmul_q8.h"
#include "ops/matmul_tile.h"
#include "quant/quant.h"
#include "quant/quant_iq.h"
#include "quant/quant_iq4.h"
#include "quant/quant_mxfp4.h"

namespace brisk::matmul_detail {
namespace {

#include "ops/matmul_quant_types-inl.h"

template <class P, int R, int T>
BRISK_TARGET(BRISK_ISA_AVX512VNNI)
void micro_vnni(const Args& a, int64_t r, int64_t t) {
  const Q8Layout L(a.k);
  const int64_t nb = a.k / 32;
  __m512 acc[R][T];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j] = _mm512_setzero_ps();
  thread_local std::vector<float> bbuf_tls;
  const size_t nbb = static_cast<size_t>(L.np * 4 + 15) / 16 * 16;  // whole vectors
  if (bbuf_tls.size() < R * nbb) bbuf_tls.resize(R * nbb);
  float* const bbuf = bbuf_tls.data();
  const uint8_t* xr[T];
  for (int j = 0; j < T; ++j) xr[j] = a.x + (t + j) * a.x_stride;
  __m512 aslot[R];  // k-quants: the current super-block's 16 slot scales
  const __m512i quad = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  for (int64_t p = 0; p < L.np; ++p) {
    __m512i u[R];
    __m512 av[R];
    if constexpr (P::kSuper) {
      if (p % 4 == 0)
        for (int i = 0; i < R; ++i)
          aslot[i] = P::super512(a.w + (r + i) * a.w_stride, p / 4, bbuf + i * nbb + p * 4);
      const __m512i idx = _mm512_add_epi32(quad, _mm512_set1_epi32(static_cast<int>(4 * (p % 4))));
      for (int i = 0; i < R; ++i) {
        u[i] = P::bytes512(a.w + (r + i) * a.w_stride, p);
        av[i] = _mm512_permutexvar_ps(idx, aslot[i]);
      }
    } else {
      for (int i = 0; i < R; ++i)
        P::pair512(a.w + (r + i) * a.w_stride, p, nb, u[i], av[i], bbuf + i * nbb + p * 4);
    }
    for (int j = 0; j < T; ++j) {
      const __m512i qx = _mm512_loadu_si512(xr[j] + p * 64);
      const __m512 dx = _mm512_loadu_ps(reinterpret_cast<const float*>(xr[j] + L.dxv_off) + p * 16);
      for (int i = 0; i < R; ++i) {
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[i], qx);
        acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(av[i], dx), acc[i][j]);
      }
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) {
      const auto* xs = reinterpret_cast<const float*>(xr[j] + L.xs_off);
      const float* bb = bbuf + i * nbb;
      __m512 bacc = _mm512_setzero_ps();
      const int64_t ns = L.np * 4;
      int64_t s = 0;
      for (; s + 16 <= ns; s += 16)
        bacc = _mm512_fmadd_ps(_mm512_loadu_ps(bb + s), _mm512_loadu_ps(xs + s), bacc);
      if (s < ns) {  // the tail of bb holds stale values: masked out
        const __mmask16 m = static_cast<__mmask16>((1u << (ns - s)) - 1);
        bacc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, bb + s), _mm512_maskz_loadu_ps(m, xs + s),
                               bacc);
      }
      a.y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]) + _mm512_reduce_add_ps(bacc);
    }
}

// The grid types (grid_step), 64 values a step: VPMADDUBSW's pair sums of the magnitudes and the
// activation bytes with the weights' signs, VPDPWSSD scaling them by S into 32-bit lanes. One row
// at a time, its super-block decoded once for the T tokens.
template <class B>
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
__m512i grid512(const B& b, int c, __mmask64& neg) {
  if constexpr (requires { iq_mag512(b, c, neg); }) {
    return iq_mag512(b, c, neg);
  } else {  // the ternary types
    const __m512i q = iq_q512(b, c);
    neg = _mm512_movepi8_mask(q);
    return _mm512_abs_epi8(q);
  }
}

template <class B, int T>
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
void grid_row512(const Args& a, int64_t r, int64_t t) {
  const Q8KLayout L(a.k);
  const B* w = reinterpret_cast<const B*>(a.w + r * a.w_stride);
  GridTokens<T> tok(a, t, L);
  // 16-bit lanes of 128-bit lane k take byte k (the high bytes zero): S of 16 values each.
  // (Index bytes with the top bit set give 0, and stay so with 4c added.)
  const __m512i pick = _mm512_set_epi64(0x8003800380038003, 0x8003800380038003, 0x8002800280028002,
                                        0x8002800280028002, 0x8001800180018001, 0x8001800180018001,
                                        0x8000800080008000, 0x8000800080008000);
  for (int64_t sb = 0; sb < L.nsb; ++sb) {
    const __m512i s16 = _mm512_broadcast_i32x4(grid_scales(w[sb]));
    __m512i sum[T];
    for (int j = 0; j < T; ++j) sum[j] = _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      __mmask64 neg;
      const __m512i u = grid512(w[sb], c, neg);
      const __m512i sv = _mm512_shuffle_epi8(
          s16, _mm512_add_epi8(pick, _mm512_set1_epi8(static_cast<char>(4 * c))));
      for (int j = 0; j < T; ++j) {
        const __m512i x = _mm512_loadu_si512(tok.block(j, sb) + 64 * c);
        const __m512i xs = _mm512_mask_sub_epi8(x, neg, _mm512_setzero_si512(), x);
        sum[j] = _mm512_dpwssd_epi32(sum[j], _mm512_maddubs_epi16(u, xs), sv);
      }
    }
    const float dw = grid_d(w[sb]);
    __m256i half[T];  // 512-bit sums folded to 256
    for (int j = 0; j < T; ++j)
      half[j] =
          _mm256_add_epi32(_mm512_castsi512_si256(sum[j]), _mm512_extracti64x4_epi64(sum[j], 1));
    int32_t sums[T];
    grid_hsums(half, sums);
    tok.steps(sb, sums, dw);
  }
  tok.store(a, r, t);
}

#define BRISK_AVX2_TARGET BRISK_ISA_AVX512VNNI
#define BRISK_AVX2_DOT 2
#include "ops/matmul_quant_iq1-inl.h"
#undef BRISK_AVX2_TARGET
#undef BRISK_AVX2_DOT

template <class B, int T>
BRISK_TARGET(BRISK_ISA_AVX512VNNI)
void grid_vnni(const Args& a, int64_t r, int64_t t) {
  if constexpr (kIQ1<B>)
    iq1_row256<B, T>(a, r, t);
  else
    grid_row512<B, T>(a, r, t);
}

BRISK_QUANT_PICK(VnniPick, micro_vnni, grid_vnni);

}  // namespace

Kernel kernel_quant_avx512(DType t) {
  return kernel_for_type<VnniPick>(t);
}

}  // namespace brisk::matmul_detail

#endif
