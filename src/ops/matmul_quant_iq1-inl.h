// IQ1_S and IQ1_M on x86, for both tiers (matmul_quant_types-inl.h's grid_step). A value is
// 8g + d: g is the grid's -1, 0 or 1, d its point's shift, +1 or -1. Its product with x is
// 8(g + 1)x + (d - 8)x.
// - The first term is VPMADDUBSW of the unsigned bytes g + 1 with the activation bytes as they
//   are, and VPMADDWD by 8S.
// - The second is one multiply-add per super-block: the 32 points' (d - 8)S times the
//   activations' sums of 8 (Q8KLayout's s8).
// So no value's sign or magnitude is ever formed: that took five instructions per 32 values, and
// the shifts two more. The sum is the same integer every tier's kernel adds. Included once per
// x86 tier, inside its namespace, compiled for BRISK_AVX2_TARGET with the word multiply-add
// BRISK_AVX2_DOT names: 0 VPMADDWD and an add (AVX2), 1 VEX VPDPWSSD (AVX-VNNI), 2 EVEX VPDPWSSD
// on 256 bits (AVX-512; its grid points are loaded one by one, so 512 bits gain nothing).

template <class B>
inline constexpr bool kIQ1 = std::is_same_v<B, BlockIQ1_S> || std::is_same_v<B, BlockIQ1_M>;

// A group's four grid points (11-bit indices), each 8 bytes g + 1.
BRISK_INLINE(BRISK_AVX2_TARGET)
__m256i iq1_points(unsigned i0, unsigned i1, unsigned i2, unsigned i3) {
  return _mm256_setr_epi64x(
      static_cast<int64_t>(kIQ1SGridPlus1[i0]), static_cast<int64_t>(kIQ1SGridPlus1[i1]),
      static_cast<int64_t>(kIQ1SGridPlus1[i2]), static_cast<int64_t>(kIQ1SGridPlus1[i3]));
}
// Group ib's points. IQ1_S: point l's 3 high index bits are bits 3l.. of the group's qh word.
BRISK_INLINE(BRISK_AVX2_TARGET) __m256i iq1_group(const BlockIQ1_S& b, int ib) {
  const unsigned qh = b.qh[ib];
  const uint8_t* qs = b.qs + 4 * ib;
  return iq1_points(qs[0] | ((qh << 8) & 0x700), qs[1] | ((qh << 5) & 0x700),
                    qs[2] | ((qh << 2) & 0x700), qs[3] | ((qh >> 1) & 0x700));
}
// IQ1_M: point l's 3 high index bits are the low bits of nibble l of the group's two qh bytes
// (the nibble's top bit is its shift's sign).
BRISK_INLINE(BRISK_AVX2_TARGET) __m256i iq1_group(const BlockIQ1_M& b, int ib) {
  const unsigned qh = b.qh[2 * ib] | static_cast<unsigned>(b.qh[2 * ib + 1]) << 8;
  const uint8_t* qs = b.qs + 4 * ib;
  return iq1_points(qs[0] | ((qh << 8) & 0x700), qs[1] | ((qh << 4) & 0x700), qs[2] | (qh & 0x700),
                    qs[3] | ((qh >> 4) & 0x700));
}

// Byte h of the result holds the shift signs of points 2h and 2h + 1 (the 16 values of scale h):
// bit 3 for the first, bit 7 for the second. IQ1_S: one sign per group, bit 15 of its qh word.
BRISK_INLINE(BRISK_AVX2_TARGET) __m128i iq1_shift_bits(const BlockIQ1_S& b) {
  const __m128i hi =
      _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qh)),
                       _mm_setr_epi8(1, 1, 3, 3, 5, 5, 7, 7, 9, 9, 11, 11, 13, 13, 15, 15));
  const __m128i sign = _mm_and_si128(hi, _mm_set1_epi8(-128));
  return _mm_or_si128(sign, _mm_srli_epi16(sign, 4));
}
// IQ1_M: bit 3 of each point's nibble, so the qh bytes as they are.
BRISK_INLINE(BRISK_AVX2_TARGET) __m128i iq1_shift_bits(const BlockIQ1_M& b) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qh));
}

// The 32 points' (d - 8)S in 16-bit lanes: points 0..15 in c[0], 16..31 in c[1].
BRISK_INLINE(BRISK_AVX2_TARGET)
void iq1_shift_coeffs(__m128i s, __m128i bits, __m256i (&c)[2]) {
  // Lane p takes byte p / 2 (within its 128-bit half: bytes 0..3, then 4..7), high byte 0.
  const __m256i pick =
      _mm256_setr_epi8(0, -128, 0, -128, 1, -128, 1, -128, 2, -128, 2, -128, 3, -128, 3, -128, 4,
                       -128, 4, -128, 5, -128, 5, -128, 6, -128, 6, -128, 7, -128, 7, -128);
  const __m256i bit = _mm256_set1_epi32(0x00800008);  // even lanes bit 3, odd lanes bit 7
  const __m256i s2 = _mm256_broadcastsi128_si256(s), f2 = _mm256_broadcastsi128_si256(bits);
  for (int h = 0; h < 2; ++h) {
    const __m256i idx = _mm256_add_epi8(pick, _mm256_set1_epi8(static_cast<char>(8 * h)));
    const __m256i neg =
        _mm256_cmpeq_epi16(_mm256_and_si256(_mm256_shuffle_epi8(f2, idx), bit), bit);
    const __m256i m = _mm256_add_epi16(_mm256_set1_epi16(-7), _mm256_add_epi16(neg, neg));
    c[h] = _mm256_mullo_epi16(_mm256_shuffle_epi8(s2, idx), m);
  }
}

// sum + the pair sums of p's 16-bit lanes times sv's (for the other grid types too).
BRISK_INLINE(BRISK_AVX2_TARGET) __m256i grid_madd256(__m256i sum, __m256i p, __m256i sv) {
#if BRISK_AVX2_DOT == 1
  return _mm256_dpwssd_avx_epi32(sum, p, sv);
#elif BRISK_AVX2_DOT == 2
  return _mm256_dpwssd_epi32(sum, p, sv);
#else
  return _mm256_add_epi32(sum, _mm256_madd_epi16(p, sv));
#endif
}

// One row of an IQ1 type against T tokens.
template <class B, int T>
BRISK_INLINE(BRISK_AVX2_TARGET)
void iq1_row256(const Args& a, int64_t r, int64_t t) {
  const Q8KLayout L(a.k);
  const B* w = reinterpret_cast<const B*>(a.w + r * a.w_stride);
  GridTokens<T> tok(a, t, L);
  for (int64_t sb = 0; sb < L.nsb; ++sb) {
    const __m128i s = grid_scales(w[sb]);
    __m256i c[2];
    iq1_shift_coeffs(s, iq1_shift_bits(w[sb]), c);
    __m256i sum[T];
    for (int j = 0; j < T; ++j) {
      const auto* x8 = reinterpret_cast<const __m256i*>(tok.sums8(j, sb));
      sum[j] = grid_madd256(_mm256_madd_epi16(_mm256_loadu_si256(x8), c[0]),
                            _mm256_loadu_si256(x8 + 1), c[1]);
    }
    const __m256i s8x = _mm256_broadcastsi128_si256(_mm_slli_epi16(s, 3));  // 8S <= 120 per byte
#pragma GCC unroll 8
    for (int ib = 0; ib < 8; ++ib) {
      const __m256i u = iq1_group(w[sb], ib);
      const __m256i sv = grid_sv256(s8x, ib);
      for (int j = 0; j < T; ++j) {
        const __m256i x =
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tok.block(j, sb)) + ib);
        sum[j] = grid_madd256(sum[j], _mm256_maddubs_epi16(u, x), sv);
      }
    }
    int32_t sums[T];
    grid_hsums(sum, sums);
    tok.steps(sb, sums, grid_d(w[sb]));
  }
  tok.store(a, r, t);
}
