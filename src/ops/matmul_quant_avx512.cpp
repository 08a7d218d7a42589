// The 512-bit tier of the integer kernels for GGUF's quantized types (matmul_quant.cpp describes
// them): VPDPBUSD over 64 u bytes of a row at a time. A file of its own so that its kernels, one
// per type and micro-tile shape, compile beside the other tiers'.

#if defined(__x86_64__)

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/quant.h"
#include "core/quant_iq.h"
#include "core/quant_iq4.h"
#include "ops/cpu.h"
#include "ops/isa_target.h"
#include "ops/matmul.h"
#include "ops/matmul_q8.h"
#include "ops/matmul_tile.h"

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
    [[maybe_unused]] __mmask64 neg[R];
    if constexpr (P::kSuper) {
      if (p % 4 == 0)
        for (int i = 0; i < R; ++i)
          aslot[i] = P::super512(a.w + (r + i) * a.w_stride, p / 4, bbuf + i * nbb + p * 4);
      const __m512i idx = _mm512_add_epi32(quad, _mm512_set1_epi32(static_cast<int>(4 * (p % 4))));
      for (int i = 0; i < R; ++i) {
        if constexpr (signs_on_x<P>())
          u[i] = P::mag512(a.w + (r + i) * a.w_stride, p, neg[i]);
        else
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
      const __m512i start =
          lane_offset<P>() && !signs_on_x<P>()
              ? _mm512_loadu_si512(reinterpret_cast<const int32_t*>(xr[j] + L.ls_off) + p * 16)
              : _mm512_setzero_si512();
      for (int i = 0; i < R; ++i) {
        __m512i xi = qx;
        if constexpr (signs_on_x<P>())
          xi = _mm512_mask_sub_epi8(qx, neg[i], _mm512_setzero_si512(), qx);
        const __m512i dot = _mm512_dpbusd_epi32(start, u[i], xi);
        acc[i][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(av[i], dx), acc[i][j]);
      }
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) {
      if constexpr (lane_offset<P>() != 0) {
        a.y[(t + j) * a.ldy + r + i] = _mm512_reduce_add_ps(acc[i][j]);
        continue;
      }
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

BRISK_QUANT_PICK(VnniPick, micro_vnni);

}  // namespace

Kernel kernel_quant_avx512(DType t) {
  return kernel_for_type<VnniPick>(t);
}

}  // namespace brisk::matmul_detail

#endif
