// The 256-bit kernels for rows interleaved 16 at a time (ops/repack.h), instantiated by
// matmul_interleaved.cpp once per byte dot-product instruction: BRISK_I256_DOT 0 = VPMADDUBSW +
// VPMADDWD (AVX2), 1 = VPDPBUSD in its VEX form (AVX-VNNI), each compiled for BRISK_I256_TARGET.
// A 512-bit column vector is two 256-bit halves, rows 0..7 and rows 8..15; a group is computed
// half by half (the second pass reads the group from L1/L2). Integer sums are exact whichever
// instruction forms them, and the float steps are those of the 512-bit kernel, so each output has
// the same bits in every variant and in the AVX-512 kernel. No include guard: included once per
// variant, inside a namespace of its own.

#define BRISK_I256 BRISK_INLINE(BRISK_I256_TARGET)

BRISK_I256 __m256i bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// s + the lane sums of u[m] . (activation bytes 4m..4m+3) for all 8 m, u bytes at most 15: the
// eight VPMADDUBSW pair sums (each at most 2 * 15 * 127) add up in int16 without overflow.
BRISK_I256 __m256i dot8_nibbles(const __m256i (&u)[8], const int8_t* xb, __m256i s) {
#if BRISK_I256_DOT == 1
  for (int m = 0; m < 8; ++m) s = _mm256_dpbusd_avx_epi32(s, u[m], bcast4(xb + 4 * m));
  return s;
#else
  __m256i p[8];
  for (int m = 0; m < 8; ++m) p[m] = _mm256_maddubs_epi16(u[m], bcast4(xb + 4 * m));
  for (int w = 4; w > 0; w /= 2)
    for (int m = 0; m < w; ++m) p[m] = _mm256_add_epi16(p[m], p[m + w]);
  return _mm256_add_epi32(s, _mm256_madd_epi16(p[0], _mm256_set1_epi16(1)));
#endif
}

// Half h of 4 nibble vectors at p: u[2q] = low nibbles of vector q, u[2q+1] = its high nibbles.
BRISK_I256 void nibbles256(const uint8_t* p, int h, __m256i (&u)[8]) {
  const __m256i m = _mm256_set1_epi8(0x0F);
  for (int q = 0; q < 4; ++q) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64 * q + 32 * h));
    u[2 * q] = _mm256_and_si256(v, m);
    u[2 * q + 1] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
  }
}

// s + the lane sums of u[m] . (activation bytes 4m..4m+3) for m in [m0, m0 + 4), u bytes at most
// 63. VPMADDUBSW's int16 pair sums stay exact for MaxU <= 63 (|x| <= 127), and two of them add
// up in int16 without overflow.
// The same with the 4 activation words already broadcast (x[m] for u[m]).
BRISK_I256 __m256i dot4_6bit(const __m256i* u, const __m256i* x, __m256i s) {
#if BRISK_I256_DOT == 1
  for (int m = 0; m < 4; ++m) s = _mm256_dpbusd_avx_epi32(s, u[m], x[m]);
  return s;
#else
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i p[4];
  for (int m = 0; m < 4; ++m) p[m] = _mm256_maddubs_epi16(u[m], x[m]);
  return _mm256_add_epi32(s,
                          _mm256_add_epi32(_mm256_madd_epi16(_mm256_add_epi16(p[0], p[1]), ones),
                                           _mm256_madd_epi16(_mm256_add_epi16(p[2], p[3]), ones)));
#endif
}
BRISK_I256 __m256i dot4_6bit(const __m256i (&u)[8], int m0, const int8_t* xb, __m256i s) {
  __m256i x[4];
  for (int m = 0; m < 4; ++m) x[m] = bcast4(xb + 4 * (m0 + m));
  return dot4_6bit(u + m0, x, s);
}

// The lane sums of u[m] . x[m] for all 8 m, u bytes at most 31 (Q5_K): four VPMADDUBSW pair sums
// (each at most 2 * 31 * 127) add up in int16 without overflow, so half as many VPMADDWD widen
// them as for 6-bit values.
BRISK_I256 __m256i dot8_5bit(const __m256i (&u)[8], const int8_t* xb) {
  __m256i x[8];
  for (int m = 0; m < 8; ++m) x[m] = bcast4(xb + 4 * m);
#if BRISK_I256_DOT == 1
  return dot4_6bit(u + 4, x + 4, dot4_6bit(u, x, _mm256_setzero_si256()));
#else
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i p[8];
  for (int m = 0; m < 8; ++m) p[m] = _mm256_maddubs_epi16(u[m], x[m]);
  for (int m = 0; m < 8; m += 4)
    p[m] = _mm256_add_epi16(_mm256_add_epi16(p[m], p[m + 1]), _mm256_add_epi16(p[m + 2], p[m + 3]));
  return _mm256_add_epi32(_mm256_madd_epi16(p[0], ones), _mm256_madd_epi16(p[4], ones));
#endif
}

// Q6_K: bits 4-5 of nibble vector k (0..3) of the 4 that a high vector hv covers, in place.
BRISK_I256 __m256i q6k_high(__m256i hv, int k) {
  const __m256i b = k < 2   ? _mm256_slli_epi16(hv, 4 - 2 * k)
                    : k > 2 ? _mm256_srli_epi16(hv, 2)
                            : hv;
  return _mm256_and_si256(b, _mm256_set1_epi8(0x30));
}

// Q6_K: a high vector's bits 4-5 of 16 values merged into the 4 nibble vectors u[0..3] that hold
// their low bits.
BRISK_I256 void add_q6k_high(__m256i hv, __m256i* u) {
  for (int k = 0; k < 4; ++k) u[k] = _mm256_or_si256(u[k], q6k_high(hv, k));
}

// Accumulates u . x into p: int16 pair sums (AVX2; at most 8 per lane before a widening, for u
// bytes at most 15) or int32 sums (AVX-VNNI).
BRISK_I256 __m256i dot_step(__m256i p, __m256i u, __m256i x) {
#if BRISK_I256_DOT == 1
  return _mm256_dpbusd_avx_epi32(p, u, x);
#else
  return _mm256_add_epi16(p, _mm256_maddubs_epi16(u, x));
#endif
}

BRISK_I256 __m256i dot_finish(__m256i p) {
#if BRISK_I256_DOT == 1
  return p;
#else
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
#endif
}

// Q4_K's 6-bit scales and minimums of a column's 16 rows and 8 sub-blocks as bytes (index
// 16 * sub-block + row), decoded 32 at a time: decoding them per sub-block in 32-bit lanes was
// a third of the one-token kernel's work.
BRISK_I256 void q4k_scales(const uint8_t* col, uint8_t* sc, uint8_t* mn) {
  const __m256i m15 = _mm256_set1_epi8(15), m3 = _mm256_set1_epi8(3);
  for (int m = 0; m < 4; ++m) {  // sub-blocks 2m and 2m + 1
    const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + 64 + 32 * m));
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 192 + 16 * m));
    // Odd sub-blocks take the high nibble; the masks keep each byte's own bits.
    const __m256i hi = _mm256_set_m128i(_mm_srli_epi16(h, 4), h);
    const __m256i s =
        _mm256_or_si256(_mm256_and_si256(lo, m15), _mm256_slli_epi16(_mm256_and_si256(hi, m3), 4));
    const __m256i n =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lo, 4), m15),
                        _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hi, 2), m3), 4));
    _mm256_store_si256(reinterpret_cast<__m256i*>(sc + 32 * m), s);
    _mm256_store_si256(reinterpret_cast<__m256i*>(mn + 32 * m), n);
  }
}

// Q5_K: bit i of each byte of hv moved to bit 4: the fifth bits of u[i] below.
BRISK_I256 __m256i fifth_bit(__m256i hv, int i) {
  const __m256i b = i < 4   ? _mm256_slli_epi16(hv, 4 - i)
                    : i > 4 ? _mm256_srli_epi16(hv, i - 4)
                            : hv;
  return _mm256_and_si256(b, _mm256_set1_epi8(0x10));
}

// Q5_K: the fifth bits of 8 rows' 32 values (32 bytes at p: the rows' lanes of the 64-byte vector)
// into u, as the 512-bit kernel's add_fifth_bits does.
BRISK_I256 void add_fifth_bits256(const uint8_t* p, __m256i (&u)[8]) {
  const __m256i hv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  for (int i = 0; i < 8; ++i) u[i] = _mm256_or_si256(u[i], fifth_bit(hv, i));
}

BRISK_I256 __m256 f16x8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

BRISK_I256 __m256 u8x8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// acc + float(s) * (ws * dx) + wm * ms for 8 rows (ws = d * sc, wm = dmin * mn): Q4_K's float
// steps, one function for every kernel here so their bits cannot drift apart.
BRISK_I256 __m256 q4k_step(__m256i s, __m256 ws, __m256 wm, __m256 dx, __m256 ms, __m256 acc) {
  acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(ws, dx), acc);
  return _mm256_fmadd_ps(wm, ms, acc);
}

// IQ4_NL and IQ4_XS: the table of the values dot_int8 takes, in each 128-bit half.
BRISK_I256 __m256i iq4_table() {
#if BRISK_I256_DOT == 1
  return _mm256_broadcastsi128_si256(
      _mm_load_si128(reinterpret_cast<const __m128i*>(kIQ4ValuesPlus128)));
#else
  return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
#endif
}

// IQ4_NL and IQ4_XS: table indices u looked up in place, into the values dot_int8 takes.
BRISK_I256 void iq4_lookup(__m256i (&u)[8]) {
  const __m256i table = iq4_table();
  for (int m = 0; m < 8; ++m) u[m] = _mm256_shuffle_epi8(table, u[m]);
}

// MXFP4: the same with its table of doubled E2M1 values.
BRISK_I256 void mxfp4_lookup(__m256i (&u)[8]) {
#if BRISK_I256_DOT == 1
  const __m256i table = _mm256_broadcastsi128_si256(
      _mm_load_si128(reinterpret_cast<const __m128i*>(kMXFP4ValuesPlus128)));
#else
  const __m256i table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMXFP4Values)));
#endif
  for (int m = 0; m < 8; ++m) u[m] = _mm256_shuffle_epi8(table, u[m]);
}

// MXFP4: 8 rows' E8M0 bytes at p as their halved scales (mxfp4_half_scale, lane by lane).
BRISK_I256 __m256 e8m0_half8(const uint8_t* p) {
  const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i tiny = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);  // e = 0, 1
  const __m256i big = _mm256_cmpgt_epi32(e, _mm256_set1_epi32(1));
  return _mm256_castsi256_ps(_mm256_blendv_epi8(tiny, normal, big));
}

// One token's integer sums over a block of 32 at xb with signed 8-bit weights (Q8_0, the IQ4
// tables). VPDPBUSD takes them + 128 as unsigned bytes, the offset folded in through hs (the
// token's -128 * sum of the block's activations); VPMADDUBSW takes them as they are, as |v| times
// x with v's sign (pair sums at most 2 * 128 * 127, exact).
BRISK_I256 __m256i dot_int8(const __m256i (&u)[8], const int8_t* xb, [[maybe_unused]] int32_t hs) {
#if BRISK_I256_DOT == 1
  __m256i s = _mm256_set1_epi32(hs);
  for (int m = 0; m < 8; ++m) s = _mm256_dpbusd_avx_epi32(s, u[m], bcast4(xb + 4 * m));
#else
  __m256i s = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int m = 0; m < 8; ++m) {
    const __m256i p =
        _mm256_maddubs_epi16(_mm256_abs_epi8(u[m]), _mm256_sign_epi8(bcast4(xb + 4 * m), u[m]));
    s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
  }
#endif
  return s;
}

// IQ4_XS: the 6-bit scales (less 32) of a column's 16 rows and 8 sub-blocks as int8 (index
// 16 * sub-block + row), decoded 32 at a time: decoding them per sub-block and half in 32-bit
// lanes was a tenth of the one-token kernel's work.
BRISK_I256 void iq4xs_scales(const uint8_t* col, int8_t* sc) {
  const __m256i m15 = _mm256_set1_epi8(15), m3 = _mm256_set1_epi8(3);
  for (int m = 0; m < 4; ++m) {  // sub-blocks 2m and 2m + 1
    const __m128i l = _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 32 + 16 * m));
    const __m128i h = _mm_srli_epi16(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 96 + 16 * (m / 2))), 4 * (m % 2));
    const __m256i lo = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(l, 4), l), m15);
    const __m256i hi = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(h, 2), h), m3);
    const __m256i v =
        _mm256_sub_epi8(_mm256_or_si256(lo, _mm256_slli_epi16(hi, 4)), _mm256_set1_epi8(32));
    _mm256_store_si256(reinterpret_cast<__m256i*>(sc + 32 * m), v);
  }
}

BRISK_I256 __m256 i8x8(const int8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// One block column's half h (rows 8h..8h+7) into the tokens' accumulators; b0: the column's first
// block of 32.
template <class P, int T>
BRISK_I256 void column256(const uint8_t* col, int64_t b0, int h, const Tokens<T>& x,
                          __m256 (&acc)[T]) {
  constexpr DType kT = P::kType;
  const __m256 dv = kT == DType::MXFP4 ? e8m0_half8(col + 8 * h) : f16x8(col + 16 * h);
  if constexpr (kT == DType::Q4_0) {
    __m256i u[8];
    nibbles256(col + 32, h, u);
    for (int j = 0; j < T; ++j) {
      const int8_t* xb = x.qx[j] + b0 * 32;
      __m256i s = _mm256_set1_epi32(x.hs[j][2 * b0] + x.hs[j][2 * b0 + 1]);
      s = dot8_nibbles(u, xb, s);
      const __m256 d = _mm256_mul_ps(dv, _mm256_set1_ps(*block_scale(x.dx[j], b0)));
      acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc[j]);
    }
  } else if constexpr (kT == DType::Q8_0 || kT == DType::IQ4_NL || kT == DType::MXFP4) {
    __m256i u[8];
    if constexpr (kT == DType::MXFP4) {
      nibbles256(col + 16, h, u);
      mxfp4_lookup(u);
    } else if constexpr (kT == DType::Q8_0) {
      for (int m = 0; m < 8; ++m)
        u[m] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + 32 + 64 * m + 32 * h));
#if BRISK_I256_DOT == 1
      const __m256i f = _mm256_set1_epi8(static_cast<char>(0x80));
      for (int m = 0; m < 8; ++m) u[m] = _mm256_xor_si256(u[m], f);  // q + 128
#endif
    } else {
      nibbles256(col + 32, h, u);
      iq4_lookup(u);
    }
    for (int j = 0; j < T; ++j) {
      const __m256i s = dot_int8(u, x.qx[j] + b0 * 32, x.hs[j][2 * b0] + x.hs[j][2 * b0 + 1]);
      const __m256 d = _mm256_mul_ps(dv, _mm256_set1_ps(*block_scale(x.dx[j], b0)));
      acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc[j]);
    }
  } else if constexpr (kT == DType::Q4_K || kT == DType::Q5_K) {
    const __m256 mv = f16x8(col + 32 + 16 * h);
    alignas(32) uint8_t scb[128], mnb[128];
    q4k_scales(col, scb, mnb);
    for (int jb = 0; jb < 8; ++jb) {
      const int64_t b = b0 + jb;
      const __m256 ws = _mm256_mul_ps(dv, u8x8(scb + 16 * jb + 8 * h));
      const __m256 wm = _mm256_mul_ps(mv, u8x8(mnb + 16 * jb + 8 * h));
      __m256i u[8];
      if constexpr (kT == DType::Q5_K) {
        nibbles256(col + q5k_nibbles(jb), h, u);
        add_fifth_bits256(col + q5k_fifth(jb) + 32 * h, u);
      } else {
        nibbles256(col + 256 + 256 * jb, h, u);
      }
      for (int j = 0; j < T; ++j) {
        const int8_t* xb = x.qx[j] + b * 32;
        __m256i s;
        if constexpr (kT == DType::Q5_K)
          s = dot8_5bit(u, xb);
        else
          s = dot8_nibbles(u, xb, _mm256_setzero_si256());
        acc[j] = q4k_step(s, ws, wm, _mm256_set1_ps(*block_scale(x.dx[j], b)),
                          _mm256_set1_ps(x.ms[j][b]), acc[j]);
      }
    }
  } else if constexpr (kT == DType::IQ4_XS) {
    alignas(32) int8_t scb[128];
    iq4xs_scales(col, scb);
    for (int jb = 0; jb < 8; ++jb) {
      const int64_t b = b0 + jb;
      const __m256 ws = _mm256_mul_ps(dv, i8x8(scb + 16 * jb + 8 * h));
      __m256i u[8];
      nibbles256(col + 128 + 256 * jb, h, u);
      iq4_lookup(u);
      for (int j = 0; j < T; ++j) {
        const __m256i s = dot_int8(u, x.qx[j] + b * 32, x.hs[j][2 * b] + x.hs[j][2 * b + 1]);
        const __m256 d = _mm256_mul_ps(ws, _mm256_set1_ps(*block_scale(x.dx[j], b)));
        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), d, acc[j]);
      }
    }
  } else {  // Q6_K
    for (int jb = 0; jb < 8; ++jb) {
      const int64_t b = b0 + jb;
      const __m256i sa = _mm256_cvtepi8_epi32(
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(col + 32 + 32 * jb + 8 * h)));
      const __m256i sb = _mm256_cvtepi8_epi32(
          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(col + 48 + 32 * jb + 8 * h)));
      const uint8_t* vals = col + 288 + 384 * jb;
      __m256i u[8];
      nibbles256(vals, h, u);
      for (int hh = 0; hh < 2; ++hh)
        add_q6k_high(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 256 + 64 * hh + 32 * h)),
            u + 4 * hh);
      for (int j = 0; j < T; ++j) {
        const int8_t* xb = x.qx[j] + b * 32;
        const __m256i s0 = dot4_6bit(u, 0, xb, _mm256_set1_epi32(x.hs[j][2 * b]));
        const __m256i s1 = dot4_6bit(u, 4, xb, _mm256_set1_epi32(x.hs[j][2 * b + 1]));
        const __m256i isum =
            _mm256_add_epi32(_mm256_mullo_epi32(s0, sa), _mm256_mullo_epi32(s1, sb));
        const __m256 d = _mm256_mul_ps(dv, _mm256_set1_ps(*block_scale(x.dx[j], b)));
        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), d, acc[j]);
      }
    }
  }
}

// One token, one Q4_K column, both halves: each pair of broadcast activation words serves the
// 16 rows as soon as it is loaded, so few registers stay live and nothing is broadcast twice.
// The same integer sums and float steps as column256.
BRISK_I256 void q4k_column_1(const uint8_t* col, int64_t b0, const Tokens<1>& x, __m256& acc0,
                             __m256& acc1) {
  alignas(32) uint8_t sc[128], mn[128];
  q4k_scales(col, sc, mn);
  const __m256 dv0 = f16x8(col), dv1 = f16x8(col + 16), mv0 = f16x8(col + 32),
               mv1 = f16x8(col + 48);
  const __m256i m = _mm256_set1_epi8(0x0F);
  for (int jb = 0; jb < 8; ++jb) {
    const int64_t b = b0 + jb;
    const int8_t* xb = x.qx[0] + b * 32;
    const uint8_t* vals = col + 256 + 256 * jb;
    __m256i p0 = _mm256_setzero_si256(), p1 = _mm256_setzero_si256();
    for (int q = 0; q < 4; ++q) {
      const __m256i xl = bcast4(xb + 8 * q), xh = bcast4(xb + 8 * q + 4);
      const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 64 * q));
      const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 64 * q + 32));
      p0 = dot_step(p0, _mm256_and_si256(v0, m), xl);
      p1 = dot_step(p1, _mm256_and_si256(v1, m), xl);
      p0 = dot_step(p0, _mm256_and_si256(_mm256_srli_epi16(v0, 4), m), xh);
      p1 = dot_step(p1, _mm256_and_si256(_mm256_srli_epi16(v1, 4), m), xh);
    }
    const __m256 dx = _mm256_set1_ps(*block_scale(x.dx[0], b));
    const __m256 ms = _mm256_set1_ps(x.ms[0][b]);
    acc0 = q4k_step(dot_finish(p0), _mm256_mul_ps(dv0, u8x8(sc + 16 * jb)),
                    _mm256_mul_ps(mv0, u8x8(mn + 16 * jb)), dx, ms, acc0);
    acc1 = q4k_step(dot_finish(p1), _mm256_mul_ps(dv1, u8x8(sc + 16 * jb + 8)),
                    _mm256_mul_ps(mv1, u8x8(mn + 16 * jb + 8)), dx, ms, acc1);
  }
}

// One token, one Q6_K column, both halves, one pair of broadcast activation words at a time
// serving the 16 rows (holding a block's 8 words and 8 weight vectors spilled). The same integer
// sums and float steps as column256.
BRISK_I256 void q6k_column_1(const uint8_t* col, int64_t b0, const Tokens<1>& x, __m256& acc0,
                             __m256& acc1) {
  const __m256i m = _mm256_set1_epi8(0x0F);
  [[maybe_unused]] const __m256i ones = _mm256_set1_epi16(1);
  for (int jb = 0; jb < 8; ++jb) {
    const int64_t b = b0 + jb;
    const int8_t* xb = x.qx[0] + b * 32;
    const uint8_t* vals = col + 288 + 384 * jb;
    __m256i isum0 = _mm256_setzero_si256(), isum1 = isum0;
    for (int hh = 0; hh < 2; ++hh) {  // values 16 hh .. 16 hh + 15: nibble vectors 2 hh, 2 hh + 1
      const __m256i hv0 =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 256 + 64 * hh));
      const __m256i hv1 =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 256 + 64 * hh + 32));
      __m256i s0 = _mm256_set1_epi32(x.hs[0][2 * b + hh]), s1 = s0;
      for (int q = 2 * hh; q < 2 * hh + 2; ++q) {
        const int k = 2 * (q - 2 * hh);
        const __m256i xl = bcast4(xb + 8 * q), xh = bcast4(xb + 8 * q + 4);
        const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 64 * q));
        const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 64 * q + 32));
        const __m256i u0l = _mm256_or_si256(_mm256_and_si256(v0, m), q6k_high(hv0, k));
        const __m256i u1l = _mm256_or_si256(_mm256_and_si256(v1, m), q6k_high(hv1, k));
        const __m256i u0h =
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m), q6k_high(hv0, k + 1));
        const __m256i u1h =
            _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v1, 4), m), q6k_high(hv1, k + 1));
#if BRISK_I256_DOT == 1
        s0 = _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(s0, u0l, xl), u0h, xh);
        s1 = _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(s1, u1l, xl), u1h, xh);
#else  // values up to 63: two pair sums at a time in int16
        s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(u0l, xl),
                                                                     _mm256_maddubs_epi16(u0h, xh)),
                                                    ones));
        s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(u1l, xl),
                                                                     _mm256_maddubs_epi16(u1h, xh)),
                                                    ones));
#endif
      }
      // The int8 scales of values 16 hh .. 16 hh + 15 of rows 0..7 and 8..15.
      const uint8_t* sc = col + 32 + 32 * jb + 16 * hh;
      isum0 = _mm256_add_epi32(
          isum0,
          _mm256_mullo_epi32(
              s0, _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc)))));
      isum1 = _mm256_add_epi32(
          isum1,
          _mm256_mullo_epi32(
              s1, _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(sc + 8)))));
    }
    const __m256 dx = _mm256_set1_ps(*block_scale(x.dx[0], b));
    acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum0), _mm256_mul_ps(f16x8(col), dx), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum1), _mm256_mul_ps(f16x8(col + 16), dx), acc1);
  }
}

// s + the lane sums of u . x for table values u, with a = |x| (unused by VPDPBUSD, which takes u +
// 128 and the offset through s's start). Each VPMADDUBSW pair sum of a and u with x's sign is at
// most 2 * 128 * 127: exact in int16.
BRISK_I256 __m256i iq4_step(__m256i s, __m256i u, __m256i x, [[maybe_unused]] __m256i a) {
#if BRISK_I256_DOT == 1
  return _mm256_dpbusd_avx_epi32(s, u, x);
#else
  const __m256i p = _mm256_maddubs_epi16(a, _mm256_sign_epi8(u, x));
  return _mm256_add_epi32(s, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
#endif
}

// One token, one IQ4_XS column, both halves, one pair of broadcast activation words at a time
// serving the 16 rows. On VPMADDUBSW, |x| is taken once per activation word for both halves and
// the weights take x's sign (|x| times v with x's sign: the same products), where |v| and x with
// v's sign cost two operations per weight vector on the two ports VPABSB and VPSIGNB share. The
// same integer sums and float steps as column256.
BRISK_I256 void iq4xs_column_1(const uint8_t* col, int64_t b0, const Tokens<1>& x, __m256& acc0,
                               __m256& acc1) {
  alignas(32) int8_t scb[128];
  iq4xs_scales(col, scb);
  const __m256i table = iq4_table(), m = _mm256_set1_epi8(0x0F);
  for (int jb = 0; jb < 8; ++jb) {
    const int64_t b = b0 + jb;
    const int8_t* xb = x.qx[0] + b * 32;
    const uint8_t* vals = col + 128 + 256 * jb;
#if BRISK_I256_DOT == 1
    __m256i s0 = _mm256_set1_epi32(x.hs[0][2 * b] + x.hs[0][2 * b + 1]), s1 = s0;
#else
    __m256i s0 = _mm256_setzero_si256(), s1 = s0;
#endif
    for (int q = 0; q < 4; ++q) {
      const __m256i xl = bcast4(xb + 8 * q), xh = bcast4(xb + 8 * q + 4);
      const __m256i al = _mm256_abs_epi8(xl), ah = _mm256_abs_epi8(xh);
      const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 64 * q));
      const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 64 * q + 32));
      const __m256i hi0 = _mm256_srli_epi16(v0, 4), hi1 = _mm256_srli_epi16(v1, 4);
      s0 = iq4_step(s0, _mm256_shuffle_epi8(table, _mm256_and_si256(v0, m)), xl, al);
      s1 = iq4_step(s1, _mm256_shuffle_epi8(table, _mm256_and_si256(v1, m)), xl, al);
      s0 = iq4_step(s0, _mm256_shuffle_epi8(table, _mm256_and_si256(hi0, m)), xh, ah);
      s1 = iq4_step(s1, _mm256_shuffle_epi8(table, _mm256_and_si256(hi1, m)), xh, ah);
    }
    const __m256 dx = _mm256_set1_ps(*block_scale(x.dx[0], b));
    acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0),
                           _mm256_mul_ps(_mm256_mul_ps(f16x8(col), i8x8(scb + 16 * jb)), dx), acc0);
    acc1 = _mm256_fmadd_ps(
        _mm256_cvtepi32_ps(s1),
        _mm256_mul_ps(_mm256_mul_ps(f16x8(col + 16), i8x8(scb + 16 * jb + 8)), dx), acc1);
  }
}

// One token, one Q5_K column, both halves, one pair of broadcast activation words at a time
// serving the 16 rows (holding a block's 8 words and 8 weight vectors took all 16 registers and
// spilled). Values up to 31: four VPMADDUBSW pair sums add up in int16. The same integer sums and
// float steps as column256.
BRISK_I256 void q5k_column_1(const uint8_t* col, int64_t b0, const Tokens<1>& x, __m256& acc0,
                             __m256& acc1) {
  alignas(32) uint8_t scb[128], mnb[128];
  q4k_scales(col, scb, mnb);
  const __m256i m = _mm256_set1_epi8(0x0F);
  for (int jb = 0; jb < 8; ++jb) {
    const int64_t b = b0 + jb;
    const int8_t* xb = x.qx[0] + b * 32;
    const uint8_t* vals = col + q5k_nibbles(jb);
    const __m256i hv0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + q5k_fifth(jb)));
    const __m256i hv1 =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + q5k_fifth(jb) + 32));
    __m256i s0 = _mm256_setzero_si256(), s1 = s0;
    for (int q2 = 0; q2 < 4; q2 += 2) {
      __m256i p0 = _mm256_setzero_si256(), p1 = p0;
      for (int q = q2; q < q2 + 2; ++q) {
        const __m256i xl = bcast4(xb + 8 * q), xh = bcast4(xb + 8 * q + 4);
        const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 64 * q));
        const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vals + 64 * q + 32));
        p0 = dot_step(p0, _mm256_or_si256(_mm256_and_si256(v0, m), fifth_bit(hv0, 2 * q)), xl);
        p1 = dot_step(p1, _mm256_or_si256(_mm256_and_si256(v1, m), fifth_bit(hv1, 2 * q)), xl);
        p0 = dot_step(p0,
                      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v0, 4), m),
                                      fifth_bit(hv0, 2 * q + 1)),
                      xh);
        p1 = dot_step(p1,
                      _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v1, 4), m),
                                      fifth_bit(hv1, 2 * q + 1)),
                      xh);
      }
      s0 = _mm256_add_epi32(s0, dot_finish(p0));
      s1 = _mm256_add_epi32(s1, dot_finish(p1));
    }
    const __m256 dx = _mm256_set1_ps(*block_scale(x.dx[0], b));
    const __m256 ms = _mm256_set1_ps(x.ms[0][b]);
    acc0 = q4k_step(s0, _mm256_mul_ps(f16x8(col), u8x8(scb + 16 * jb)),
                    _mm256_mul_ps(f16x8(col + 32), u8x8(mnb + 16 * jb)), dx, ms, acc0);
    acc1 = q4k_step(s1, _mm256_mul_ps(f16x8(col + 16), u8x8(scb + 16 * jb + 8)),
                    _mm256_mul_ps(f16x8(col + 48), u8x8(mnb + 16 * jb + 8)), dx, ms, acc1);
  }
}

// One token, one column, both halves: in one pass where the type has a kernel for it, else as
// column256's two.
template <class P>
BRISK_I256 void column_both(const uint8_t* col, int64_t b0, const Tokens<1>& x, __m256 (&acc0)[1],
                            __m256 (&acc1)[1]) {
  constexpr DType kT = P::kType;
  if constexpr (kT == DType::Q4_K) {
    q4k_column_1(col, b0, x, acc0[0], acc1[0]);
  } else if constexpr (kT == DType::Q6_K) {
    q6k_column_1(col, b0, x, acc0[0], acc1[0]);
  } else if constexpr (kT == DType::IQ4_XS) {
    iq4xs_column_1(col, b0, x, acc0[0], acc1[0]);
  } else if constexpr (kT == DType::Q5_K) {
    q5k_column_1(col, b0, x, acc0[0], acc1[0]);
  } else {
    column256<P, 1>(col, b0, 0, x, acc0);
    column256<P, 1>(col, b0, 1, x, acc1);
  }
}

template <class P, int T>
BRISK_TARGET(BRISK_I256_TARGET)
void interleaved_256(const Args& a, int64_t r, int64_t t) {
  constexpr int kBlock = super_blocks(P::kType) ? 256 : 32;
  const uint64_t gb = group_block_bytes(P::kType);
  const uint8_t* g = a.w + r * a.w_stride;
  const Tokens<T> x(a, t);
  if constexpr (T == 1) {
    // One token: both halves per column, sharing the activation loads, in one pass.
    __m256 acc0[1] = {_mm256_setzero_ps()}, acc1[1] = {_mm256_setzero_ps()};
    const int64_t n_col = a.k / kBlock;
    for (int64_t c = 0; c < n_col; ++c) {
      prefetch_stream(g + static_cast<uint64_t>(c) * gb, gb);
      column_both<P>(g + static_cast<uint64_t>(c) * gb, c * (kBlock / 32), x, acc0, acc1);
    }
    _mm256_storeu_ps(a.y + t * a.ldy + r, acc0[0]);
    _mm256_storeu_ps(a.y + t * a.ldy + r + 8, acc1[0]);
    return;
  }
  for (int h = 0; h < 2; ++h) {
    __m256 acc[T];
    for (int j = 0; j < T; ++j) acc[j] = _mm256_setzero_ps();
    for (int64_t c = 0; c < a.k / kBlock; ++c) {
      if (h == 0) prefetch_stream(g + static_cast<uint64_t>(c) * gb, gb);  // T <= kStreamTokens
      column256<P, T>(g + static_cast<uint64_t>(c) * gb, c * (kBlock / 32), h, x, acc);
    }
    for (int j = 0; j < T; ++j) _mm256_storeu_ps(a.y + (t + j) * a.ldy + r + 8 * h, acc[j]);
  }
}

// One token over G groups side by side (rows r..r+16G-1), each group's columns summed as
// interleaved_256<P, 1> sums them (both halves per column), in the same order: G streams of
// weights in flight, as on 512 bits (matmul_interleaved.cpp). BRISK_ISA=avx2, tg64 on the
// TinyLlama-shaped files, 2 threads, against one group, alternating, two rounds: Q8_0 25.6, 22.4 ->
// 29.5, 26.8 tokens/s, Q4_0 34.5, 49.8 -> 41.3, 54.0 with 4 groups (2: level).
template <class P, int G>
BRISK_TARGET(BRISK_I256_TARGET)
void interleaved_256_groups(const Args& a, int64_t r, int64_t t) {
  constexpr int kBlock = super_blocks(P::kType) ? 256 : 32;
  const uint64_t gb = group_block_bytes(P::kType), gs = 16 * a.w_stride;
  const uint8_t* g = a.w + r * a.w_stride;
  const Tokens<1> x(a, t);
  __m256 acc[G][2][1];
  for (int i = 0; i < G; ++i) acc[i][0][0] = acc[i][1][0] = _mm256_setzero_ps();
  for (int64_t c = 0; c < a.k / kBlock; ++c)
    for (int i = 0; i < G; ++i) {
      const uint8_t* col = g + i * gs + static_cast<uint64_t>(c) * gb;
      prefetch_stream(col, gb);
      column256<P, 1>(col, c * (kBlock / 32), 0, x, acc[i][0]);
      column256<P, 1>(col, c * (kBlock / 32), 1, x, acc[i][1]);
    }
  for (int i = 0; i < G; ++i) {
    _mm256_storeu_ps(a.y + t * a.ldy + r + 16 * i, acc[i][0][0]);
    _mm256_storeu_ps(a.y + t * a.ldy + r + 16 * i + 8, acc[i][1][0]);
  }
}
// One token's rows [r0, r1), decode_groups at a time (as on 512 bits).
template <class P>
void decode_256(const Args& a, int64_t r0, int64_t r1, int64_t t) {
  constexpr int G = decode_groups(P::kType);
  decode_group_loop<G, interleaved_256_groups<P, G>, interleaved_256<P, 1>>(a, r0, r1, t);
}

#undef BRISK_I256
#undef BRISK_I256_TARGET
#undef BRISK_I256_DOT
