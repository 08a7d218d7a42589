// The 256-bit integer kernel for GGUF's quantized types, instantiated by matmul_quant.cpp once per
// byte dot-product instruction: BRISK_AVX2_DOT 0 = VPMADDUBSW + VPMADDWD (AVX2), 1 = VPDPBUSD in
// its VEX form (AVX-VNNI), each compiled for BRISK_AVX2_TARGET. Both give the same integer sums.
// Weights are unpacked by the portable code into a buffer; the products, the scaling and the
// accumulation are vectorized. No include guard: included once per variant, inside a namespace of
// its own.

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

#undef BRISK_AVX2_TARGET
#undef BRISK_AVX2_DOT
