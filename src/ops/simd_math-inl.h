// Vector math shared by the AVX-512 and AVX2 kernels (x86-64 only). Included by ops/*.cpp.
#pragma once

#if defined(__x86_64__)
#include "ops/isa_target.h"

namespace brisk {

// e^x for 16 lanes: x = n ln2 + r, |r| <= ln2/2, e^r by a degree-6 polynomial (relative error
// about 2e-7), 2^n built in the exponent bits. Inputs below -87.3 give 0 (+ tiny); inputs must be
// below 88.
BRISK_TARGET(BRISK_ISA_AVX512) inline __m512 exp16(__m512 x) {
  x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504f)),
                                        _MM_FROUND_TO_NEAREST_INT);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i e =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
}

// The same for 8 lanes (AVX2 + FMA), the same steps and constants.
BRISK_TARGET(BRISK_ISA_AVX2) inline __m256 exp8(__m256 x) {
  x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.0f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// tanh x = 1 - 2 / (e^(2x) + 1) for 16 lanes: exact limits at +-1 for large |x| (e^(2x) saturates
// or vanishes), absolute error about 1e-7 near 0.
BRISK_TARGET(BRISK_ISA_AVX512) inline __m512 tanh16(__m512 x) {
  const __m512 e = exp16(_mm512_add_ps(x, x));
  return _mm512_sub_ps(_mm512_set1_ps(1.0f),
                       _mm512_div_ps(_mm512_set1_ps(2.0f), _mm512_add_ps(e, _mm512_set1_ps(1.0f))));
}

// The same for 8 lanes.
BRISK_TARGET(BRISK_ISA_AVX2) inline __m256 tanh8(__m256 x) {
  const __m256 e = exp8(_mm256_add_ps(x, x));
  return _mm256_sub_ps(_mm256_set1_ps(1.0f),
                       _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
}

BRISK_TARGET(BRISK_ISA_AVX2) inline float hmax8(__m256 x) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// (a0 + a4) + (a2 + a6) + ((a1 + a5) + (a3 + a7)), a fixed order.
BRISK_TARGET(BRISK_ISA_AVX2) inline float hsum8(__m256 x) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Transposes 8 rows of 8 lanes in place: r[d] then holds element d of every row.
BRISK_TARGET(BRISK_ISA_AVX2) inline void transpose8(__m256 (&r)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int g = 0; g < 8; g += 4) {  // elements (0, 4), (1, 5), (2, 6), (3, 7) of rows g..g+3
    u[g] = _mm256_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm256_shuffle_ps(t[g], t[g + 2], 0xee);
    u[g + 2] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm256_shuffle_ps(t[g + 1], t[g + 3], 0xee);
  }
  for (int d = 0; d < 4; ++d) {
    r[d] = _mm256_permute2f128_ps(u[d], u[d + 4], 0x20);
    r[d + 4] = _mm256_permute2f128_ps(u[d], u[d + 4], 0x31);
  }
}

BRISK_TARGET(BRISK_ISA_AVX512) inline __m512 unpacklo64(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}
BRISK_TARGET(BRISK_ISA_AVX512) inline __m512 unpackhi64(__m512 a, __m512 b) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)));
}

// Transposes 16 rows of 16 32-bit lanes: out[d] holds element d of every row.
BRISK_TARGET(BRISK_ISA_AVX512) inline void transpose16(const __m512 (&r)[16], __m512 (&out)[16]) {
  // x[g][e]: lane block b holds rows 4g..4g+3 at column 4b + e.
  __m512 x[4][4];
  for (int g = 0; g < 4; ++g) {
    const __m512 lo01 = _mm512_unpacklo_ps(r[4 * g], r[4 * g + 1]);
    const __m512 hi01 = _mm512_unpackhi_ps(r[4 * g], r[4 * g + 1]);
    const __m512 lo23 = _mm512_unpacklo_ps(r[4 * g + 2], r[4 * g + 3]);
    const __m512 hi23 = _mm512_unpackhi_ps(r[4 * g + 2], r[4 * g + 3]);
    x[g][0] = unpacklo64(lo01, lo23);
    x[g][1] = unpackhi64(lo01, lo23);
    x[g][2] = unpacklo64(hi01, hi23);
    x[g][3] = unpackhi64(hi01, hi23);
  }
  // Per column e, a 4x4 transpose of 128-bit blocks.
  for (int e = 0; e < 4; ++e) {
    const __m512 y0 = _mm512_shuffle_f32x4(x[0][e], x[1][e], 0x44);
    const __m512 y1 = _mm512_shuffle_f32x4(x[0][e], x[1][e], 0xee);
    const __m512 y2 = _mm512_shuffle_f32x4(x[2][e], x[3][e], 0x44);
    const __m512 y3 = _mm512_shuffle_f32x4(x[2][e], x[3][e], 0xee);
    out[e] = _mm512_shuffle_f32x4(y0, y2, 0x88);
    out[4 + e] = _mm512_shuffle_f32x4(y0, y2, 0xdd);
    out[8 + e] = _mm512_shuffle_f32x4(y1, y3, 0x88);
    out[12 + e] = _mm512_shuffle_f32x4(y1, y3, 0xdd);
  }
}

}  // namespace brisk
#endif
