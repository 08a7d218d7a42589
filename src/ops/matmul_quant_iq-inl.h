// The x86 kernels' reads of the grid i-quants (matmul_quant_types-inl.h's grid_step): the
// 512-bit tier's 64 values of quarter c of a super-block (its 32-groups 2c and 2c + 1), the same
// integers iq_decode32 gives, and both tiers' scales (grid_scales). IQ2 and IQ3 give their grid
// points' magnitudes (all positive) and a 64-bit mask of the negative values, one bit per value,
// which the kernel applies to the activation bytes instead (IQ1 has its own kernel,
// matmul_quant_iq1-inl.h). Grid points are loaded one by one into a vector (a gather instruction
// took as long as the rest of a 64-value step), and the seven stored sign bits of 8 values get
// their eighth in vector lanes rather than by table lookups. Included by the tiers' kernel files
// inside their namespaces.

// 8 bytes as stored (sign bits: bit i of byte k for value 8k + i), for both tiers' kernels.
inline uint64_t iq_load64(const void* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// The 8 grid points grid[i[0..7]] in one vector.
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
__m512i iq_points8(const uint64_t* grid, const unsigned (&i)[8]) {
  __m128i q[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k)
    q[k] = _mm_insert_epi64(_mm_cvtsi64_si128(static_cast<int64_t>(grid[i[2 * k]])),
                            static_cast<int64_t>(grid[i[2 * k + 1]]), 1);
  const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(q[0]), q[1], 1);
  const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(q[2]), q[3], 1);
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// The 16 grid points grid[i[0..15]] (4 bytes each) in one vector.
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
__m512i iq_points16(const uint32_t* grid, const unsigned (&i)[16]) {
  __m128i q[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_cvtsi32_si128(static_cast<int>(grid[i[4 * k]]));
    v = _mm_insert_epi32(v, static_cast<int>(grid[i[4 * k + 1]]), 1);
    v = _mm_insert_epi32(v, static_cast<int>(grid[i[4 * k + 2]]), 2);
    q[k] = _mm_insert_epi32(v, static_cast<int>(grid[i[4 * k + 3]]), 3);
  }
  const __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(q[0]), q[1], 1);
  const __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(q[2]), q[3], 1);
  return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

// 8 sign bytes, byte 0 of each 32-bit lane of s, to the mask of 64 values: bit 8k + i = bit i of
// lane k's byte.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __mmask64 iq_sign_mask(__m256i s) {
  const __m512i q = _mm512_cvtepu32_epi64(s);  // byte k in byte 0 of 64-bit lane k
  const __m512i spread = _mm512_shuffle_epi8(
      q, _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 8, 8, 8, 8, 8, 8, 8, 8)));
  return _mm512_test_epi8_mask(spread, _mm512_set1_epi64(0x8040201008040201));
}

// 7 stored sign bits per lane (bits 0..6 of f's 32-bit lanes) to 8: the eighth is their parity
// (kIQEvenSigns).
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __mmask64 iq_even_sign_mask(__m256i f) {
  __m256i p = _mm256_xor_si256(f, _mm256_srli_epi32(f, 4));
  p = _mm256_xor_si256(p, _mm256_srli_epi32(p, 2));
  p = _mm256_xor_si256(p, _mm256_srli_epi32(p, 1));
  return iq_sign_mask(
      _mm256_or_si256(f, _mm256_slli_epi32(_mm256_and_si256(p, _mm256_set1_epi32(1)), 7)));
}

// 64 sign bits stored in order (IQ2_S, IQ3_S).
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __mmask64 iq_stored_signs(const uint8_t* p) {
  return _cvtu64_mask64(iq_load64(p));
}

// The 7-bit sign fields 0..3 of the words w0 (points 0..3) and w1 (points 4..7).
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m256i iq_sign_fields(uint32_t w0, uint32_t w1) {
  const __m256i w = _mm256_blend_epi32(_mm256_set1_epi32(static_cast<int>(w0)),
                                       _mm256_set1_epi32(static_cast<int>(w1)), 0xF0);
  return _mm256_and_si256(_mm256_srlv_epi32(w, _mm256_setr_epi32(0, 7, 14, 21, 0, 7, 14, 21)),
                          _mm256_set1_epi32(127));
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_mag512(const BlockIQ2_XXS& b, int c, __mmask64& neg) {
  // Groups 2c and 2c + 1: 8 bytes each, 4 index bytes then the signs-and-scale word.
  const auto* q = reinterpret_cast<const uint8_t*>(b.qs + 8 * c);
  neg = iq_even_sign_mask(iq_sign_fields(iq_word(q + 4), iq_word(q + 12)));
  const unsigned i[8] = {q[0], q[1], q[2], q[3], q[8], q[9], q[10], q[11]};
  return iq_points8(kIQ2XXSGrid, i);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_mag512(const BlockIQ2_XS& b, int c, __mmask64& neg) {
  const uint16_t* q = b.qs + 8 * c;
  neg = iq_even_sign_mask(_mm256_srli_epi32(
      _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))), 9));
  unsigned i[8];
  for (int k = 0; k < 8; ++k) i[k] = q[k] & 511u;
  return iq_points8(kIQ2XSGrid, i);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_mag512(const BlockIQ2_S& b, int c, __mmask64& neg) {
  // Point k's two high index bits are bits 2k, 2k + 1 of the 16-bit word of qh[2c], qh[2c + 1].
  uint16_t qh;
  std::memcpy(&qh, b.qh + 2 * c, 2);
  neg = iq_stored_signs(b.qs + 32 + 8 * c);
  unsigned i[8];
  for (int k = 0; k < 8; ++k) i[k] = b.qs[8 * c + k] | ((qh >> (2 * k)) & 3u) << 8;
  return iq_points8(kIQ2SGrid, i);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_mag512(const BlockIQ3_XXS& b, int c, __mmask64& neg) {
  neg = iq_even_sign_mask(iq_sign_fields(iq_word(b.qs + 64 + 8 * c), iq_word(b.qs + 68 + 8 * c)));
  unsigned i[16];
  for (int k = 0; k < 16; ++k) i[k] = b.qs[16 * c + k];
  return iq_points16(kIQ3XXSGrid, i);
}

BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq_mag512(const BlockIQ3_S& b, int c, __mmask64& neg) {
  // Point k's ninth index bit is bit k of the 16-bit word of qh[2c], qh[2c + 1]. The 16 indices
  // are put together in vector lanes and read back from memory (in scalar code their shifts and
  // masks took longer than the rest of the step).
  uint16_t qh;
  std::memcpy(&qh, b.qh + 2 * c, 2);
  neg = iq_stored_signs(b.signs + 8 * c);
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i hi = _mm512_slli_epi32(
      _mm512_and_si512(_mm512_srlv_epi32(_mm512_set1_epi32(qh), lane), _mm512_set1_epi32(1)), 8);
  alignas(64) unsigned i[16];
  _mm512_store_si512(
      i, _mm512_or_si512(
             _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16 * c))),
             hi));
  return iq_points16(kIQ3SGrid, i);
}

// Both x86 tiers' reads of a grid super-block's scales: S of iq_int_scales as 16 bytes, in vector
// steps (the scalar loop, vectorized by the compiler byte by byte, took as long as a quarter of the
// super-block's products), and D with F16C (the same value as f16_to_f32_fast).
template <class B>
BRISK_INLINE(BRISK_ISA_AVX2)
float grid_d(const B& b) {
  return _cvtsh_ss(iq_d_bits(b)) * kGridFactor<B>;
}
BRISK_INLINE(BRISK_ISA_AVX2) __m128i grid_odd(__m128i s) {
  return _mm_or_si128(_mm_add_epi8(s, s), _mm_set1_epi8(1));
}
// Two 4-bit scales per byte, low nibble first.
BRISK_INLINE(BRISK_ISA_AVX2) __m128i grid_nibbles(__m128i x) {
  const __m128i m = _mm_set1_epi8(15);
  return _mm_unpacklo_epi8(_mm_and_si128(x, m), _mm_and_si128(_mm_srli_epi16(x, 4), m));
}
// IQ2_XXS: group ib's scale is the top nibble of byte 8ib + 7 (of its signs-and-scale word).
BRISK_INLINE(BRISK_ISA_AVX2) __m128i grid_scales(const BlockIQ2_XXS& b) {
  const auto* q = reinterpret_cast<const __m256i*>(b.qs);
  const __m256i lo = _mm256_srli_epi64(_mm256_loadu_si256(q), 60);      // groups 0..3
  const __m256i hi = _mm256_srli_epi64(_mm256_loadu_si256(q + 1), 60);  // groups 4..7
  // Byte 0 of each 64-bit lane, twice, to bytes 4j.. of the result (j: the group's place).
  const __m256i o = _mm256_or_si256(
      _mm256_shuffle_epi8(lo, _mm256_set_epi64x(-1, 0x08080000FFFFFFFF, -1, 0xFFFFFFFF08080000)),
      _mm256_shuffle_epi8(hi, _mm256_set_epi64x(0x08080000FFFFFFFF, -1, 0xFFFFFFFF08080000, -1)));
  return grid_odd(_mm_or_si128(_mm256_castsi256_si128(o), _mm256_extracti128_si256(o, 1)));
}
template <class B>
requires std::is_same_v<B, BlockIQ2_XS> || std::is_same_v<B, BlockIQ2_S> BRISK_INLINE(
    BRISK_ISA_AVX2)
__m128i grid_scales(const B& b) {
  return grid_odd(grid_nibbles(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.scales))));
}
// IQ3_XXS: group ib's scale is the top nibble of word ib at qs + 64.
BRISK_INLINE(BRISK_ISA_AVX2) __m128i grid_scales(const BlockIQ3_XXS& b) {
  const __m256i w =
      _mm256_srli_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs + 64)), 28);
  const __m256i p =
      _mm256_shuffle_epi8(w, _mm256_set_epi64x(0x0C0C080804040000, -1, -1, 0x0C0C080804040000));
  return grid_odd(_mm_or_si128(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1)));
}
BRISK_INLINE(BRISK_ISA_AVX2) __m128i grid_scales(const BlockIQ3_S& b) {
  const __m128i s8 = grid_nibbles(_mm_cvtsi32_si128(static_cast<int>(iq_word(b.scales))));
  return grid_odd(_mm_unpacklo_epi8(s8, s8));
}
// IQ1_S: bits 12..14 of group ib's qh word.
BRISK_INLINE(BRISK_ISA_AVX2) __m128i grid_scales(const BlockIQ1_S& b) {
  const __m128i w =
      _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qh)), 12),
                    _mm_set1_epi16(7));
  return grid_odd(
      _mm_shuffle_epi8(w, _mm_setr_epi8(0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14)));
}
// IQ1_M: S[4k + m] from bits 3m.. of scale word k. 16-bit lanes take their word, shifted left by
// a multiply (AVX2 has no per-lane 16-bit shift) so the field lands in the top 3 bits.
BRISK_INLINE(BRISK_ISA_AVX2) __m128i grid_scales(const BlockIQ1_M& b) {
  const __m128i w = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.scales));
  const __m128i up = _mm_setr_epi16(8192, 1024, 128, 16, 8192, 1024, 128, 16);
  const __m128i lo = _mm_srli_epi16(
      _mm_mullo_epi16(
          _mm_shuffle_epi8(w, _mm_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3)), up),
      13);
  const __m128i hi = _mm_srli_epi16(
      _mm_mullo_epi16(
          _mm_shuffle_epi8(w, _mm_setr_epi8(4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7)), up),
      13);
  return grid_odd(_mm_packus_epi16(lo, hi));
}
// The ternary types: iq_int_scales (rare in files).
template <class B>
BRISK_INLINE(BRISK_ISA_AVX2)
__m128i grid_scales(const B& b) {
  alignas(16) uint8_t S[16];
  iq_int_scales(b, S);
  return _mm_load_si128(reinterpret_cast<const __m128i*>(S));
}

// The integer sums of T tokens' vectors of 32-bit lanes, to s[0..T): with several tokens,
// reduced side by side (a token alone took its own shuffles and adds, as many instructions per
// super-block as a quarter of its products in prefill).
template <int T>
BRISK_INLINE(BRISK_ISA_AVX2)
void grid_hsums(const __m256i (&v)[T], int32_t (&s)[T]) {
  if constexpr (T == 1) {
    __m128i x = _mm_add_epi32(_mm256_castsi256_si128(v[0]), _mm256_extracti128_si256(v[0], 1));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4e));
    s[0] = _mm_cvtsi128_si32(_mm_add_epi32(x, _mm_shuffle_epi32(x, 0xb1)));
  } else {
    __m256i a[4];
    for (int j = 0; j < 4; ++j) a[j] = j < T ? v[j] : _mm256_setzero_si256();
    // Each 128-bit lane ends as the four tokens' partial sums, in order.
    const __m256i h =
        _mm256_hadd_epi32(_mm256_hadd_epi32(a[0], a[1]), _mm256_hadd_epi32(a[2], a[3]));
    alignas(16) int32_t t[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(t),
                    _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
    for (int j = 0; j < T; ++j) s[j] = t[j];
  }
}

// The 16-bit lanes of S for the 32 values of group ib of a super-block: lanes 0..7 (its first 16
// values' pair sums) byte 2ib of s16's 128-bit lanes, lanes 8..15 byte 2ib + 1.
BRISK_INLINE(BRISK_ISA_AVX2) __m256i grid_sv256(__m256i s16, int ib) {
  // The high bytes' indices have the top bit set: 0, and stay so with 2ib added.
  const __m256i pick = _mm256_set_epi64x(0x8001800180018001, 0x8001800180018001, 0x8000800080008000,
                                         0x8000800080008000);
  return _mm256_shuffle_epi8(s16,
                             _mm256_add_epi8(pick, _mm256_set1_epi8(static_cast<char>(2 * ib))));
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
