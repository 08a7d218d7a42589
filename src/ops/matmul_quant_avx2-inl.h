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
  // The 16 indices put together in vector lanes and read back from memory (in scalar code their
  // shifts and masks took as long as the rest of the step).
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i h = _mm256_set1_epi32(qh);
  alignas(32) unsigned i[16];
  for (int k = 0; k < 2; ++k) {
    const __m256i hi = _mm256_slli_epi32(
        _mm256_and_si256(_mm256_srlv_epi32(h, _mm256_add_epi32(lane, _mm256_set1_epi32(8 * k))),
                         _mm256_set1_epi32(1)),
        8);
    const __m256i lo = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs + 16 * c + 8 * k)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(i + 8 * k), _mm256_or_si256(lo, hi));
  }
  grid_points256(kIQ3SGrid, i, u);
}

#include "ops/matmul_quant_iq1-inl.h"

// The ternary types: their decoded signed values q, |q| as magnitudes and q's signs.
template <class B>
BRISK_INLINE(BRISK_AVX2_TARGET)
void grid256(const B& b, int c, __m256i (&u)[2], __m256i (&sg)[2]) {
  alignas(32) int8_t q[64];
  float unused[2];
  iq_decode32(b, 2 * c, q, unused);
  iq_decode32(b, 2 * c + 1, q + 32, unused);
  for (int h = 0; h < 2; ++h) {
    sg[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(q + 32 * h));
    u[h] = _mm256_abs_epi8(sg[h]);
  }
}

// Integer sums of one token over quarter c of a super-block (values 64c..64c+63): the magnitudes
// u times the activation bytes with the weights' signs, pair sums scaled by the 16-bit lanes of
// sv0/sv1 (S of each 16 values), into the 32-bit lanes of sum. Magnitudes of at most 62 (IQ3)
// keep VPMADDUBSW's pair sums below 2^15.
BRISK_INLINE(BRISK_AVX2_TARGET)
__m256i grid_dot256(__m256i sum, const __m256i (&u)[2], const __m256i (&sg)[2], __m256i sv0,
                    __m256i sv1, const int8_t* x) {
  const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32));
  const __m256i p0 = _mm256_maddubs_epi16(u[0], _mm256_sign_epi8(x0, sg[0]));
  const __m256i p1 = _mm256_maddubs_epi16(u[1], _mm256_sign_epi8(x1, sg[1]));
  return grid_madd256(grid_madd256(sum, p0, sv0), p1, sv1);
}

// The grid types (grid_step): one row at a time, its super-block decoded once for the T tokens.
template <class B, int T>
BRISK_INLINE(BRISK_AVX2_TARGET)
void grid_row256(const Args& a, int64_t r, int64_t t) {
  const Q8KLayout L(a.k);
  const B* w = reinterpret_cast<const B*>(a.w + r * a.w_stride);
  GridTokens<T> tok(a, t, L);
  for (int64_t sb = 0; sb < L.nsb; ++sb) {
    const __m256i s16 = _mm256_broadcastsi128_si256(grid_scales(w[sb]));
    __m256i sum[T];
    for (int j = 0; j < T; ++j) sum[j] = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
      __m256i u[2], sg[2];
      grid256(w[sb], c, u, sg);
      const __m256i sv0 = grid_sv256(s16, 2 * c), sv1 = grid_sv256(s16, 2 * c + 1);
      for (int j = 0; j < T; ++j)
        sum[j] = grid_dot256(sum[j], u, sg, sv0, sv1, tok.block(j, sb) + 64 * c);
    }
    const float dw = grid_d(w[sb]);
    int32_t sums[T];
    grid_hsums(sum, sums);
    tok.steps(sb, sums, dw);
  }
  tok.store(a, r, t);
}

template <class B, int T>
BRISK_TARGET(BRISK_AVX2_TARGET)
void grid_avx2(const Args& a, int64_t r, int64_t t) {
  if constexpr (kIQ1<B>)
    iq1_row256<B, T>(a, r, t);
  else
    grid_row256<B, T>(a, r, t);
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
  for (int64_t p = 0; p < L.np; ++p) {
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
      for (int i = 0; i < R; ++i) {
        const __m256i d0 = dot_u8s8<P::kMaxU>(u0[i], x0);
        const __m256i d1 = dot_u8s8<P::kMaxU>(u1[i], x1);
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
      for (int64_t s = 0; s < L.np * 4; ++s) bsum += bb[s] * xs[s];
      a.y[(t + j) * a.ldy + r + i] = reduce16(lanes) + bsum;
    }
}

// Every type's kernels in this variant, as kernel_for_type picks them.
BRISK_QUANT_PICK(Pick256, micro_avx2, grid_avx2);

#undef BRISK_AVX2_TARGET
#undef BRISK_AVX2_DOT
