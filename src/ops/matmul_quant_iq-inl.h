// The 512-bit kernel's reads of the grid i-quants: the 64 signed values of quarter c of a
// super-block (its 32-groups 2c and 2c + 1), the same integers iq_decode32 gives. Grid points are
// looked up 8 bytes (IQ2, IQ1) or 4 bytes (IQ3) at a time into one vector; sign bits become a
// 64-bit mask, one bit per value, applied with one masked subtraction. Included by
// matmul_quant.cpp inside its namespace.

inline uint32_t iq_load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t iq_load64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Magnitudes m with the values whose mask bit is set negated.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_apply_signs(__m512i m, uint64_t negative) {
  return _mm512_mask_sub_epi8(m, static_cast<__mmask64>(negative), _mm512_setzero_si512(), m);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ2_XXS& b, int c) {
  alignas(64) uint64_t pts[8];
  uint64_t neg = 0;
  for (int h = 0; h < 2; ++h) {
    const int ib = 2 * c + h;
    const uint32_t idx = iq_load32(b.qs + 4 * ib), aux = iq_load32(b.qs + 4 * ib + 2);
    for (int l = 0; l < 4; ++l) {
      pts[4 * h + l] = kIQ2XXSGrid[(idx >> (8 * l)) & 0xFF];
      neg |= static_cast<uint64_t>(kIQEvenSigns[(aux >> (7 * l)) & 127]) << (8 * (4 * h + l));
    }
  }
  return iq_apply_signs(_mm512_load_si512(pts), neg);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ2_XS& b, int c) {
  alignas(64) uint64_t pts[8];
  uint64_t neg = 0;
  for (int k = 0; k < 8; ++k) {
    const uint16_t v = b.qs[8 * c + k];
    pts[k] = kIQ2XSGrid[v & 511];
    neg |= static_cast<uint64_t>(kIQEvenSigns[v >> 9]) << (8 * k);
  }
  return iq_apply_signs(_mm512_load_si512(pts), neg);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ2_S& b, int c) {
  alignas(64) uint64_t pts[8];
  for (int k = 0; k < 8; ++k) {
    const int qh = b.qh[2 * c + k / 4];
    pts[k] = kIQ2SGrid[b.qs[8 * c + k] | ((qh << (8 - 2 * (k % 4))) & 0x300)];
  }
  return iq_apply_signs(_mm512_load_si512(pts), iq_load64(b.qs + 32 + 8 * c));
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ3_XXS& b, int c) {
  alignas(64) uint32_t pts[16];
  for (int k = 0; k < 16; ++k) pts[k] = kIQ3XXSGrid[b.qs[16 * c + k]];
  uint64_t neg = 0;
  for (int h = 0; h < 2; ++h) {
    const uint32_t aux = iq_load32(b.qs + 64 + 4 * (2 * c + h));
    for (int l = 0; l < 4; ++l)
      neg |= static_cast<uint64_t>(kIQEvenSigns[(aux >> (7 * l)) & 127]) << (8 * (4 * h + l));
  }
  return iq_apply_signs(_mm512_load_si512(pts), neg);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ3_S& b, int c) {
  alignas(64) uint32_t pts[16];
  for (int k = 0; k < 16; ++k) {
    const int ib = 2 * c + k / 8, j = k % 8;
    pts[k] = kIQ3SGrid[b.qs[8 * ib + j] | ((b.qh[ib] << (8 - j)) & 256)];
  }
  return iq_apply_signs(_mm512_load_si512(pts), iq_load64(b.signs + 8 * c));
}

// IQ1: grid bytes g (-1, 0, 1) to 8g + 1, or 8g - 1 where the point's shift is negative.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq1_q512(const uint64_t* pts, uint64_t minus) {
  __m512i g = _mm512_load_si512(pts);
  g = _mm512_add_epi8(g, g);
  g = _mm512_add_epi8(g, g);
  g = _mm512_add_epi8(g, g);
  return _mm512_add_epi8(g, _mm512_mask_blend_epi8(static_cast<__mmask64>(minus),
                                                   _mm512_set1_epi8(1), _mm512_set1_epi8(-1)));
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ1_S& b, int c) {
  alignas(64) uint64_t pts[8];
  uint64_t minus = 0;
  for (int h = 0; h < 2; ++h) {
    const int ib = 2 * c + h, qh = b.qh[ib];
    for (int l = 0; l < 4; ++l)
      pts[4 * h + l] = kIQ1SGrid[b.qs[4 * ib + l] | ((qh >> (3 * l)) & 7) << 8];
    if (qh & 0x8000) minus |= 0xFFFFFFFFull << (32 * h);
  }
  return iq1_q512(pts, minus);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_q512(const BlockIQ1_M& b, int c) {
  alignas(64) uint64_t pts[8];
  uint64_t minus = 0;
  for (int k = 0; k < 8; ++k) {
    const int qh = b.qh[4 * c + k / 2] >> (4 * (k % 2));  // point k's nibble
    pts[k] = kIQ1SGrid[b.qs[8 * c + k] | (qh & 7) << 8];
    if (qh & 8) minus |= 0xFFull << (8 * k);
  }
  return iq1_q512(pts, minus);
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
