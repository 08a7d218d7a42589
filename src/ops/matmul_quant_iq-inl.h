// The 512-bit kernel's reads of the grid i-quants: the 64 signed values of quarter c of a
// super-block (its 32-groups 2c and 2c + 1), the same integers iq_decode32 gives. Grid points are
// gathered 8 bytes (IQ2, IQ1) or 4 bytes (IQ3) at a time into one vector, from indices computed in
// vector registers; sign bits become a
// 64-bit mask, one bit per value, applied with one masked subtraction. Included by
// matmul_quant.cpp inside its namespace.

inline uint64_t iq_load64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Magnitudes m with the values whose mask bit is set negated.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_apply_signs(__m512i m, uint64_t negative) {
  return _mm512_mask_sub_epi8(m, static_cast<__mmask64>(negative), _mm512_setzero_si512(), m);
}

// The 8 grid points of 8 indices (32-bit lanes), one gather.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_gather8(__m256i idx, const uint64_t* grid) {
  return _mm512_i32gather_epi64(idx, grid, 8);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ2_XXS& b, int c) {
  // Groups 2c and 2c + 1: 8 bytes each, 4 index bytes then the signs-and-scale word.
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 8 * c));
  const __m128i pick = _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i idx = _mm256_cvtepu8_epi32(_mm_shuffle_epi8(v, pick));
  uint64_t neg = 0;
  for (int h = 0; h < 2; ++h) {
    const uint32_t aux = iq_word(b.qs + 4 * (2 * c + h) + 2);
    for (int l = 0; l < 4; ++l)
      neg |= static_cast<uint64_t>(kIQEvenSigns[(aux >> (7 * l)) & 127]) << (8 * (4 * h + l));
  }
  return iq_apply_signs(iq_gather8(idx, kIQ2XXSGrid), neg);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ2_XS& b, int c) {
  const __m256i w =
      _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 8 * c)));
  uint64_t neg = 0;
  for (int k = 0; k < 8; ++k)
    neg |= static_cast<uint64_t>(kIQEvenSigns[b.qs[8 * c + k] >> 9]) << (8 * k);
  return iq_apply_signs(iq_gather8(_mm256_and_si256(w, _mm256_set1_epi32(511)), kIQ2XSGrid), neg);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ2_S& b, int c) {
  // Point k's two high index bits are bits 2k, 2k + 1 of the 16-bit word of qh[2c], qh[2c + 1].
  uint16_t qh;
  std::memcpy(&qh, b.qh + 2 * c, 2);
  const __m256i hi = _mm256_slli_epi32(
      _mm256_and_si256(
          _mm256_srlv_epi32(_mm256_set1_epi32(qh), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
          _mm256_set1_epi32(3)),
      8);
  const __m256i lo =
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs + 8 * c)));
  return iq_apply_signs(iq_gather8(_mm256_or_si256(lo, hi), kIQ2SGrid),
                        iq_load64(b.qs + 32 + 8 * c));
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ3_XXS& b, int c) {
  const __m512i idx =
      _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16 * c)));
  uint64_t neg = 0;
  for (int h = 0; h < 2; ++h) {
    const uint32_t aux = iq_word(b.qs + 64 + 4 * (2 * c + h));
    for (int l = 0; l < 4; ++l)
      neg |= static_cast<uint64_t>(kIQEvenSigns[(aux >> (7 * l)) & 127]) << (8 * (4 * h + l));
  }
  return iq_apply_signs(_mm512_i32gather_epi32(idx, kIQ3XXSGrid, 4), neg);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ3_S& b, int c) {
  // Point k's ninth index bit is bit k of the 16-bit word of qh[2c], qh[2c + 1].
  uint16_t qh;
  std::memcpy(&qh, b.qh + 2 * c, 2);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i hi = _mm512_slli_epi32(
      _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32(qh), lane), _mm512_set1_epi32(1)), 8);
  const __m512i idx = _mm512_or_si512(
      _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16 * c))), hi);
  return iq_apply_signs(_mm512_i32gather_epi32(idx, kIQ3SGrid, 4), iq_load64(b.signs + 8 * c));
}

// IQ1: the grid bytes g (-1, 0, 1) of 8 points to 8g + 1, or 8g - 1 where the point's shift is
// negative.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq1_q512(__m256i idx, uint64_t minus) {
  __m512i g = iq_gather8(idx, kIQ1SGrid);
  g = _mm512_add_epi8(g, g);
  g = _mm512_add_epi8(g, g);
  g = _mm512_add_epi8(g, g);
  return _mm512_add_epi8(g, _mm512_mask_blend_epi8(static_cast<__mmask64>(minus),
                                                   _mm512_set1_epi8(1), _mm512_set1_epi8(-1)));
}

// Low index bytes of points 8c..8c+7 (both IQ1 types keep them 4 per group of 32, in order).
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m256i iq1_low(const uint8_t* qs, int c) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(qs + 8 * c)));
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ1_S& b, int c) {
  // Point 4h + l's 3 high index bits: bits 3l.. of group 2c + h's qh word.
  const int qh0 = b.qh[2 * c], qh1 = b.qh[2 * c + 1];
  const __m256i words = _mm256_setr_epi32(qh0, qh0, qh0, qh0, qh1, qh1, qh1, qh1);
  const __m256i hi = _mm256_slli_epi32(
      _mm256_and_si256(_mm256_srlv_epi32(words, _mm256_setr_epi32(0, 3, 6, 9, 0, 3, 6, 9)),
                       _mm256_set1_epi32(7)),
      8);
  const uint64_t minus =
      (qh0 & 0x8000 ? 0xFFFFFFFFull : 0) | (qh1 & 0x8000 ? 0xFFFFFFFFull << 32 : 0);
  return iq1_q512(_mm256_or_si256(iq1_low(b.qs, c), hi), minus);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ1_M& b, int c) {
  // Point k's nibble (3 high index bits, then the shift's sign) is nibble k of qh[4c..4c + 3].
  const uint32_t nib = iq_word(b.qh + 4 * c);
  const __m256i n = _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(nib)),
                                      _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
  const __m256i hi = _mm256_slli_epi32(_mm256_and_si256(n, _mm256_set1_epi32(7)), 8);
  uint64_t minus = 0;
  for (int k = 0; k < 8; ++k)
    if ((nib >> (4 * k)) & 8) minus |= 0xFFull << (8 * k);
  return iq1_q512(_mm256_or_si256(iq1_low(b.qs, c), hi), minus);
}

// The ternary types: the portable decoder (rare in Llama-family files).
template <class B>
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
__m512i iq_q512(const B& b, int c) {
  alignas(64) int8_t q[64];
  float s[2];
  iq_decode32(b, 2 * c, q, s);
  iq_decode32(b, 2 * c + 1, q + 32, s);
  return _mm512_load_si512(q);
}
