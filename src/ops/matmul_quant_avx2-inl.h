// The 256-bit integer kernel for GGUF's quantized types, instantiated once per byte dot-product
// instruction (matmul_quant_avx2.cpp, matmul_quant_avxvnni.cpp): BRISK_AVX2_DOT 0 = VPMADDUBSW +
// VPMADDWD (AVX2), 1 = VPDPBUSD in its VEX form (AVX-VNNI), each compiled for BRISK_AVX2_TARGET.
// Both give the same integer sums. Weights are unpacked by the portable code into a buffer; the
// products, the scaling and the accumulation are vectorized. No include guard: included once per
// variant, inside a namespace of its own.

// VPMADDUBSW's int16 pair sums saturate above 32767, so with it types with u bytes above 63 (Q8_0)
// split u into nibbles; VPDPBUSD sums into int32 and needs no split.
template <int MaxU>
BRISK_INLINE(BRISK_AVX2_TARGET)
__m256i dot_u8s8(__m256i u, __m256i x) {
#if BRISK_AVX2_DOT == 1
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, x);
#else
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (MaxU <= 63) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), ones);
  } else {
    const __m256i m = _mm256_set1_epi8(0x0F);
    const __m256i lo = _mm256_and_si256(u, m), hi = _mm256_and_si256(_mm256_srli_epi16(u, 4), m);
    return _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(lo, x), ones),
                            _mm256_madd_epi16(_mm256_maddubs_epi16(hi, x), _mm256_set1_epi16(16)));
  }
#endif
}

// The grid i-quants IQ2 and IQ3, as the 512-bit kernel reads them (matmul_quant_iq-inl.h): the
// magnitudes of the 64 values of quarter c of a super-block in u[0] (values 0..31) and u[1], and
// for each value +1 or -1 in sg, which VPSIGNB applies to the activation bytes.

// 64 sign bits (bit i of byte k: value 8k + i negative) to sg.
BRISK_INLINE(BRISK_AVX2_TARGET) void grid_signs256(uint64_t bits, __m256i (&sg)[2]) {
  const __m256i b = _mm256_set1_epi64x(static_cast<int64_t>(bits));
  const __m256i sel = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i one = _mm256_set1_epi8(1);
  for (int h = 0; h < 2; ++h) {
    // Bytes 8j..8j+7 of vector h take sign byte 4h + j.
    const char k = static_cast<char>(4 * h);
    const __m256i spread = _mm256_shuffle_epi8(
        b, _mm256_setr_epi8(k, k, k, k, k, k, k, k, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1, k + 1,
                            k + 1, k + 2, k + 2, k + 2, k + 2, k + 2, k + 2, k + 2, k + 2, k + 3,
                            k + 3, k + 3, k + 3, k + 3, k + 3, k + 3, k + 3));
    sg[h] = _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, sel), sel), one);
  }
}

// The 8 sign bytes (+1, or -1 for a negative value) of each 7-bit sign field, its eighth bit the
// parity (kIQEvenSigns): one load per 8 values, where working the parity out took more
// instructions than the rest of a 64-value step.
inline constexpr std::array<uint64_t, 128> kGridSignBytes = [] {
  std::array<uint64_t, 128> t{};
  for (size_t f = 0; f < 128; ++f)
    for (int i = 0; i < 8; ++i)
      t[f] |= static_cast<uint64_t>((kIQEvenSigns[f] >> i) & 1 ? 0xFF : 0x01) << (8 * i);
  return t;
}();

// The sign vectors of 8 points from their 7-bit sign fields (points 4h..4h+3 in sg[h]).
BRISK_INLINE(BRISK_AVX2_TARGET) void grid_sign_fields(const unsigned (&f)[8], __m256i (&sg)[2]) {
  for (int h = 0; h < 2; ++h)
    sg[h] = _mm256_setr_epi64x(static_cast<int64_t>(kGridSignBytes[f[4 * h]]),
                               static_cast<int64_t>(kGridSignBytes[f[4 * h + 1]]),
                               static_cast<int64_t>(kGridSignBytes[f[4 * h + 2]]),
                               static_cast<int64_t>(kGridSignBytes[f[4 * h + 3]]));
}
// The four 7-bit sign fields of words w0 (points 0..3) and w1 (points 4..7).
BRISK_INLINE(BRISK_AVX2_TARGET) void grid_sign_words(uint32_t w0, uint32_t w1, __m256i (&sg)[2]) {
  const unsigned f[8] = {w0 & 127, (w0 >> 7) & 127, (w0 >> 14) & 127, (w0 >> 21) & 127,
                         w1 & 127, (w1 >> 7) & 127, (w1 >> 14) & 127, (w1 >> 21) & 127};
  grid_sign_fields(f, sg);
}

BRISK_INLINE(BRISK_AVX2_TARGET)
void grid_points256(const uint64_t* grid, const unsigned (&i)[8], __m256i (&u)[2]) {
  for (int h = 0; h < 2; ++h)
    u[h] = _mm256_setr_epi64x(
        static_cast<int64_t>(grid[i[4 * h]]), static_cast<int64_t>(grid[i[4 * h + 1]]),
        static_cast<int64_t>(grid[i[4 * h + 2]]), static_cast<int64_t>(grid[i[4 * h + 3]]));
}

BRISK_INLINE(BRISK_AVX2_TARGET)
void grid_points256(const uint32_t* grid, const unsigned (&i)[16], __m256i (&u)[2]) {
  for (int h = 0; h < 2; ++h) {
    const unsigned* j = i + 8 * h;
    u[h] = _mm256_setr_epi32(static_cast<int>(grid[j[0]]), static_cast<int>(grid[j[1]]),
                             static_cast<int>(grid[j[2]]), static_cast<int>(grid[j[3]]),
                             static_cast<int>(grid[j[4]]), static_cast<int>(grid[j[5]]),
                             static_cast<int>(grid[j[6]]), static_cast<int>(grid[j[7]]));
  }
}

BRISK_INLINE(BRISK_AVX2_TARGET)
void grid256(const BlockIQ2_XXS& b, int c, __m256i (&u)[2], __m256i (&sg)[2]) {
  const auto* q = reinterpret_cast<const uint8_t*>(b.qs + 8 * c);
  grid_sign_words(iq_word(q + 4), iq_word(q + 12), sg);
  const unsigned i[8] = {q[0], q[1], q[2], q[3], q[8], q[9], q[10], q[11]};
  grid_points256(kIQ2XXSGrid, i, u);
}

BRISK_INLINE(BRISK_AVX2_TARGET)
void grid256(const BlockIQ2_XS& b, int c, __m256i (&u)[2], __m256i (&sg)[2]) {
  const uint16_t* q = b.qs + 8 * c;
  unsigned i[8], f[8];
  for (int k = 0; k < 8; ++k) i[k] = q[k] & 511u, f[k] = q[k] >> 9;
  grid_sign_fields(f, sg);
  grid_points256(kIQ2XSGrid, i, u);
}

BRISK_INLINE(BRISK_AVX2_TARGET)
void grid256(const BlockIQ2_S& b, int c, __m256i (&u)[2], __m256i (&sg)[2]) {
  uint16_t qh;
  std::memcpy(&qh, b.qh + 2 * c, 2);
  grid_signs256(iq_load64(b.qs + 32 + 8 * c), sg);
  unsigned i[8];
  for (int k = 0; k < 8; ++k) i[k] = b.qs[8 * c + k] | ((qh >> (2 * k)) & 3u) << 8;
  grid_points256(kIQ2SGrid, i, u);
}

BRISK_INLINE(BRISK_AVX2_TARGET)
void grid256(const BlockIQ3_XXS& b, int c, __m256i (&u)[2], __m256i (&sg)[2]) {
  grid_sign_words(iq_word(b.qs + 64 + 8 * c), iq_word(b.qs + 68 + 8 * c), sg);
  unsigned i[16];
  for (int k = 0; k < 16; ++k) i[k] = b.qs[16 * c + k];
  grid_points256(kIQ3XXSGrid, i, u);
}

BRISK_INLINE(BRISK_AVX2_TARGET)
void grid256(const BlockIQ3_S& b, int c, __m256i (&u)[2], __m256i (&sg)[2]) {
  uint16_t qh;
  std::memcpy(&qh, b.qh + 2 * c, 2);
  grid_signs256(iq_load64(b.signs + 8 * c), sg);
  unsigned i[16];
  for (int k = 0; k < 16; ++k) i[k] = b.qs[16 * c + k] | ((qh >> k) & 1u) << 8;
  grid_points256(kIQ3SGrid, i, u);
}

// The signed-grid path of micro_avx2: one pair of 32-groups of R rows, the scales of their
// super-block in a16 (16 per row, computed at its first pair).
template <class P, int R, int T>
BRISK_INLINE(BRISK_AVX2_TARGET)
void grid_pair256(const Args& a, int64_t r, int64_t p, const uint8_t* const (&xr)[T],
                  const Q8Layout& L, float (&a16)[R][16], __m256 (&acc)[R][T][2]) {
  using B = typename P::B;
  __m256i u[R][2], sg[R][2];
  __m256 a0[R], a1[R];
  const int c = static_cast<int>(p % 4);
  for (int i = 0; i < R; ++i) {
    const B& blk = reinterpret_cast<const B*>(a.w + (r + i) * a.w_stride)[p / 4];
    if (c == 0) iq_scales16(blk, a16[i]);
    grid256(blk, c, u[i], sg[i]);
    const float* s = a16[i] + 4 * c;
    a0[i] = _mm256_set_m128(_mm_set1_ps(s[1]), _mm_set1_ps(s[0]));
    a1[i] = _mm256_set_m128(_mm_set1_ps(s[3]), _mm_set1_ps(s[2]));
  }
  for (int j = 0; j < T; ++j) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr[j] + p * 64));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr[j] + p * 64 + 32));
    const float* dxv = reinterpret_cast<const float*>(xr[j] + L.dxv_off) + p * 16;
    const __m256 dx0 = _mm256_loadu_ps(dxv), dx1 = _mm256_loadu_ps(dxv + 8);
    for (int i = 0; i < R; ++i) {
      // Magnitudes of at most 62 (IQ3): VPMADDUBSW's pair sums stay below 2^15.
      const __m256i d0 = dot_u8s8<63>(u[i][0], _mm256_sign_epi8(x0, sg[i][0]));
      const __m256i d1 = dot_u8s8<63>(u[i][1], _mm256_sign_epi8(x1, sg[i][1]));
      acc[i][j][0] =
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(d0), _mm256_mul_ps(a0[i], dx0), acc[i][j][0]);
      acc[i][j][1] =
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(d1), _mm256_mul_ps(a1[i], dx1), acc[i][j][1]);
    }
  }
}

template <class P, int R, int T>
BRISK_TARGET(BRISK_AVX2_TARGET)
void micro_avx2(const Args& a, int64_t r, int64_t t) {
  const Q8Layout L(a.k);
  const int64_t nb = a.k / 32;
  __m256 acc[R][T][2];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) acc[i][j][0] = acc[i][j][1] = _mm256_setzero_ps();
  thread_local std::vector<float> bbuf_tls;
  const size_t nbb = static_cast<size_t>(L.np * 4 + 7) / 8 * 8;
  if (bbuf_tls.size() < R * nbb) bbuf_tls.resize(R * nbb);
  float* const bbuf = bbuf_tls.data();
  const uint8_t* xr[T];
  for (int j = 0; j < T; ++j) xr[j] = a.x + (t + j) * a.x_stride;
  [[maybe_unused]] float a16[R][16];
  for (int64_t p = 0; p < L.np; ++p) {
    if constexpr (signs_on_x<P>()) {
      grid_pair256<P, R, T>(a, r, p, xr, L, a16, acc);
      continue;
    }
    alignas(32) uint8_t u[R][64];
    float av[R][4];
    __m256i u0[R], u1[R];
    __m256 a0[R], a1[R];
    for (int i = 0; i < R; ++i) {
      P::pair(a.w + (r + i) * a.w_stride, p, nb, u[i], av[i], bbuf + i * nbb + p * 4);
      u0[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(u[i]));
      u1[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(u[i] + 32));
      a0[i] = _mm256_set_m128(_mm_set1_ps(av[i][1]), _mm_set1_ps(av[i][0]));
      a1[i] = _mm256_set_m128(_mm_set1_ps(av[i][3]), _mm_set1_ps(av[i][2]));
    }
    for (int j = 0; j < T; ++j) {
      const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr[j] + p * 64));
      const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xr[j] + p * 64 + 32));
      const float* dxv = reinterpret_cast<const float*>(xr[j] + L.dxv_off) + p * 16;
      const __m256 dx0 = _mm256_loadu_ps(dxv), dx1 = _mm256_loadu_ps(dxv + 8);
      __m256i ls0 = _mm256_setzero_si256(), ls1 = ls0;
      if constexpr (lane_offset<P>() != 0) {
        const auto* ls = reinterpret_cast<const __m256i*>(xr[j] + L.ls_off + p * 64);
        ls0 = _mm256_loadu_si256(ls), ls1 = _mm256_loadu_si256(ls + 1);
      }
      for (int i = 0; i < R; ++i) {
        const __m256i d0 = _mm256_add_epi32(ls0, dot_u8s8<P::kMaxU>(u0[i], x0));
        const __m256i d1 = _mm256_add_epi32(ls1, dot_u8s8<P::kMaxU>(u1[i], x1));
        acc[i][j][0] =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(d0), _mm256_mul_ps(a0[i], dx0), acc[i][j][0]);
        acc[i][j][1] =
            _mm256_fmadd_ps(_mm256_cvtepi32_ps(d1), _mm256_mul_ps(a1[i], dx1), acc[i][j][1]);
      }
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < T; ++j) {
      alignas(32) float lanes[16];
      _mm256_store_ps(lanes, acc[i][j][0]);
      _mm256_store_ps(lanes + 8, acc[i][j][1]);
      const auto* xs = reinterpret_cast<const float*>(xr[j] + L.xs_off);
      const float* bb = bbuf + i * nbb;
      float bsum = 0;
      if constexpr (lane_offset<P>() == 0)
        for (int64_t s = 0; s < L.np * 4; ++s) bsum += bb[s] * xs[s];
      a.y[(t + j) * a.ldy + r + i] = reduce16(lanes) + bsum;
    }
}

// Every type's kernels in this variant, as kernel_for_type picks them.
BRISK_QUANT_PICK(Pick256, micro_avx2);

#undef BRISK_AVX2_TARGET
#undef BRISK_AVX2_DOT
