// The GGUF quantized types as the integer kernels read them (matmul_quant.cpp describes the one
// shape they are brought to): a decoder P per type turns 64 values at a time into u bytes with
// their a and b scales, in portable code and, on x86, in 256- and 512-bit registers. Each tier's
// kernel file (matmul_quant.cpp, matmul_quant_avx512.cpp, matmul_quant_avx2.cpp) includes this
// inside an anonymous namespace of brisk::matmul_detail, after the headers it names, and
// instantiates its kernels for every type through kernel_for_type.

inline float h2f(uint16_t h) {
  return f16_to_f32_fast(h);
}

// ---------------------------------------------------------------------------------------------
// The 32-element types: one block gives 32 u bytes, one a and one b.

template <class Blk>
uint32_t qh32(const Blk& b) {
  uint32_t v;
  std::memcpy(&v, b.qh, 4);
  return v;
}

// Q4_0, Q4_1, Q5_0, Q5_1: 4-bit values (low nibbles hold values 0..15, high nibbles 16..31), a
// fifth bit from qh for the Q5 types, and either a stored min or an offset: d * (u - kOffset).
template <class Blk, bool kFifthBit, bool kMin>
struct NibbleP {
  using B = Blk;
  static constexpr int kMaxU = kFifthBit ? 31 : 15;  // largest u byte
  static constexpr bool kHasMin = kMin;
  static constexpr float kOffset = kMin ? 0.0f : kFifthBit ? 16.0f : 8.0f;
  static void scales(const B& b, float& a, float& c) {
    a = h2f(b.d);
    if constexpr (kMin)
      c = h2f(b.m);
    else
      c = -kOffset * a;
  }
  static void block(const B& b, uint8_t* u, float& a, float& c) {
    uint32_t qh = 0;
    if constexpr (kFifthBit) qh = qh32(b);
    for (int j = 0; j < 16; ++j) {
      u[j] = static_cast<uint8_t>((b.qs[j] & 0xF) | ((qh >> j) & 1) << 4);
      u[j + 16] = static_cast<uint8_t>((b.qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4);
    }
    scales(b, a, c);
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m256i block256(const B& b) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
    const __m128i m = _mm_set1_epi8(0x0F);
    const __m256i u = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));
    if constexpr (kFifthBit) return _mm256_mask_add_epi8(u, qh32(b), u, _mm256_set1_epi8(16));
    return u;
  }
#endif
};
using Q4_0P = NibbleP<BlockQ4_0, false, false>;
using Q4_1P = NibbleP<BlockQ4_1, false, true>;
using Q5_0P = NibbleP<BlockQ5_0, true, false>;
using Q5_1P = NibbleP<BlockQ5_1, true, true>;

struct Q8_0P {
  using B = BlockQ8_0;
  static constexpr int kMaxU = 255;  // largest u byte
  static constexpr bool kHasMin = false;
  static constexpr float kOffset = 128;  // value = d * (u - kOffset) without a min
  static void scales(const B& b, float& a, float& c) { a = h2f(b.d), c = -128 * a; }
  static void block(const B& b, uint8_t* u, float& a, float& c) {
    for (int j = 0; j < 32; ++j) u[j] = static_cast<uint8_t>(b.qs[j] + 128);
    scales(b, a, c);
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m256i block256(const B& b) {
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)),
                            _mm256_set1_epi8(static_cast<char>(0x80)));
  }
#endif
};

// Types of 4-bit indices into a table of 16 u bytes (IQ4_NL, IQ4_XS, MXFP4): 32 values (16 bytes
// of indices, low nibbles first) looked up.
inline void table_group(const uint8_t* table, const uint8_t* qs, uint8_t* u) {
  for (int j = 0; j < 16; ++j) u[j] = table[qs[j] & 0xF], u[j + 16] = table[qs[j] >> 4];
}
#if defined(__x86_64__)
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m256i table_group256(const uint8_t* table, const uint8_t* qs) {
  const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m128i m = _mm_set1_epi8(0x0F);
  const __m256i idx = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m), _mm_and_si128(q, m));
  const __m128i t = _mm_load_si128(reinterpret_cast<const __m128i*>(table));
  return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), idx);
}
#endif

// IQ4_NL and IQ4_XS: 4-bit indices into a table of signed values, brought to u bytes as the
// table value + 128 (so value = d * (u - 128)).
// 32 values of an IQ4 group (16 bytes of indices) to u bytes.
inline void iq4_group(const uint8_t* qs, uint8_t* u) {
  table_group(kIQ4ValuesPlus128, qs, u);
}
#if defined(__x86_64__)
// The table of u bytes in each 128-bit lane, for VPSHUFB.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i iq4_table512() {
  return _mm512_broadcast_i32x4(
      _mm_load_si128(reinterpret_cast<const __m128i*>(kIQ4ValuesPlus128)));
}
#endif

struct IQ4_NLP {
  using B = BlockIQ4_NL;
  static constexpr int kMaxU = 241;  // largest u byte (113 + 128)
  static constexpr bool kHasMin = false;
  static constexpr float kOffset = 128;
  static void scales(const B& b, float& a, float& c) { a = h2f(b.d), c = -128 * a; }
  static void block(const B& b, uint8_t* u, float& a, float& c) {
    iq4_group(b.qs, u);
    scales(b, a, c);
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m256i block256(const B& b) {
    return table_group256(kIQ4ValuesPlus128, b.qs);
  }
#endif
};

// MXFP4: 4-bit indices into the doubled E2M1 values, brought to u bytes as value + 128 (so value
// = a * (u - 128)), a the block's power-of-two scale, halved as the values are doubled.
struct MXFP4P {
  using B = BlockMXFP4;
  static constexpr int kMaxU = 140;  // largest u byte (12 + 128)
  static constexpr bool kHasMin = false;
  static constexpr float kOffset = 128;
  static void scales(const B& b, float& a, float& c) { a = mxfp4_half_scale(b.e), c = -128 * a; }
  static void block(const B& b, uint8_t* u, float& a, float& c) {
    table_group(kMXFP4ValuesPlus128, b.qs, u);
    scales(b, a, c);
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m256i block256(const B& b) {
    return table_group256(kMXFP4ValuesPlus128, b.qs);
  }
#endif
};

// A pair of 32-blocks (the second absent at the end of an odd row: zeros).
template <class P>
struct Legacy {
  static constexpr int kMaxU = P::kMaxU;
  static constexpr bool kSuper = false;
  static void pair(const uint8_t* row, int64_t p, int64_t nb, uint8_t* u, float* a, float* b) {
    const auto* blk = reinterpret_cast<const typename P::B*>(row);
    float a0, b0, a1 = 0, b1 = 0;
    P::block(blk[2 * p], u, a0, b0);
    if (2 * p + 1 < nb)
      P::block(blk[2 * p + 1], u + 32, a1, b1);
    else
      std::fill(u + 32, u + 64, 0);
    a[0] = a[1] = a0, a[2] = a[3] = a1;
    b[0] = b[1] = b0, b[2] = b[3] = b1;
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI)
  static void pair512(const uint8_t* row, int64_t p, int64_t nb, __m512i& u, __m512& a, float* b) {
    const auto* blk = reinterpret_cast<const typename P::B*>(row);
    const bool two = 2 * p + 1 < nb;
    const auto& A = blk[2 * p];
    if constexpr (std::is_same_v<typename P::B, BlockMXFP4>) {  // a power-of-two scale byte
      float a0, b0, a1 = 0, b1 = 0;
      P::scales(A, a0, b0);
      __m256i hi = _mm256_setzero_si256();
      if (two) {
        P::scales(blk[2 * p + 1], a1, b1);
        hi = P::block256(blk[2 * p + 1]);
      }
      u = _mm512_inserti64x4(_mm512_castsi256_si512(P::block256(A)), hi, 1);
      a = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(a0), _mm512_set1_ps(a1));
      b[0] = b[1] = b0, b[2] = b[3] = b1;
    } else {
      // Both blocks' scales (and mins) converted at once: [dA, dB, mA, mB].
      __m128i h = _mm_cvtsi32_si128(A.d);
      __m256i hi = _mm256_setzero_si256();
      if (two) {
        const auto& Bk = blk[2 * p + 1];
        h = _mm_insert_epi16(h, Bk.d, 1);
        if constexpr (P::kHasMin) h = _mm_insert_epi16(h, Bk.m, 3);
        hi = P::block256(Bk);
      }
      if constexpr (P::kHasMin) h = _mm_insert_epi16(h, A.m, 2);
      const __m128 f = _mm_cvtph_ps(h);
      u = _mm512_inserti64x4(_mm512_castsi256_si512(P::block256(A)), hi, 1);
      a = _mm512_permutexvar_ps(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0),
                                _mm512_castps128_ps512(f));
      const __m128 bv = P::kHasMin ? _mm_unpackhi_ps(f, f)
                                   : _mm_mul_ps(_mm_unpacklo_ps(f, f), _mm_set1_ps(-P::kOffset));
      _mm_storeu_ps(b, bv);
    }
  }
#endif
};

// ---------------------------------------------------------------------------------------------
// The k-quants: pair p of a row is quarter p % 4 of super-block p / 4.

// Scales of quarter c of a Q4_K/Q5_K super-block: its two 32-groups' a and b, each for 2 slots.
template <class B>
void k4_pair_scales(const B& s, int c, float* a, float* b) {
  const float d = h2f(s.d), dmin = h2f(s.dmin);
  for (int h = 0; h < 2; ++h) {
    uint8_t sc, m;
    k4_scale_min(2 * c + h, s.scales, sc, m);
    a[2 * h] = a[2 * h + 1] = d * sc;
    b[2 * h] = b[2 * h + 1] = -dmin * m;
  }
}

#if defined(__x86_64__)
// The 2-bit fields at bit s0 (low half of the result) and at bit s1 (high half) of the 32 bytes at
// p: how the k-quants read bytes that pack four values. (Uniform shifts per half: per-lane variable
// word shifts are slow on some CPUs.)
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512i two_bit_fields(const uint8_t* p, int s0, int s1) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_and_si512(
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srl_epi16(v, _mm_cvtsi32_si128(s0))),
                         _mm256_srl_epi16(v, _mm_cvtsi32_si128(s1)), 1),
      _mm512_set1_epi8(3));
}
#endif

#if defined(__x86_64__)
// Q4_K and Q5_K share their scale layout.
// The 16 slot scales of super-block sb (each 32-group's over its 2 slots); its 16 offsets go
// to b16.
template <class B>
BRISK_INLINE(BRISK_ISA_AVX512VNNI)
__m512 k4_super512(const uint8_t* row, int64_t sb, float* b16) {
  const B& s = reinterpret_cast<const B*>(row)[sb];
  // k4_scale_min for all 8 groups at once, 4 bytes per 32-bit word.
  uint32_t u[3];
  std::memcpy(u, s.scales, 12);
  const uint32_t lo6 = 0x3f3f3f3fu, lo4 = 0x0f0f0f0fu, lo2 = 0x03030303u;
  const uint64_t sc8 = (u[0] & lo6) | static_cast<uint64_t>((u[2] & lo4) | ((u[0] >> 6) & lo2) << 4)
                                          << 32;
  const uint64_t mn8 =
      (u[1] & lo6) | static_cast<uint64_t>(((u[2] >> 4) & lo4) | ((u[1] >> 6) & lo2) << 4) << 32;
  const __m256 a8 = _mm256_mul_ps(
      _mm256_set1_ps(_cvtsh_ss(s.d)),
      _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(sc8)))));
  const __m256 b8 = _mm256_mul_ps(
      _mm256_set1_ps(-_cvtsh_ss(s.dmin)),
      _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<int64_t>(mn8)))));
  const __m512i dup = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
  _mm512_storeu_ps(b16, _mm512_permutexvar_ps(dup, _mm512_castps256_ps512(b8)));
  return _mm512_permutexvar_ps(dup, _mm512_castps256_ps512(a8));
}
#endif

struct Q4_KP {
  using B = BlockQ4_K;
  static constexpr bool kSuper = true;  // scales per 256-value super-block
  static constexpr int kMaxU = 15;      // largest u byte
  static void pair(const uint8_t* row, int64_t p, int64_t, uint8_t* u, float* a, float* b) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int c = static_cast<int>(p % 4);
    k4_pair_scales(s, c, a, b);
    for (int l = 0; l < 32; ++l)
      u[l] = s.qs[c * 32 + l] & 0xF, u[32 + l] = static_cast<uint8_t>(s.qs[c * 32 + l] >> 4);
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m512i nibbles(const uint8_t* q) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const __m256i m = _mm256_set1_epi8(0x0F);
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(v, m)),
                              _mm256_and_si256(_mm256_srli_epi16(v, 4), m), 1);
  }
  BRISK_INLINE(BRISK_ISA_AVX512VNNI)
  static __m512 super512(const uint8_t* row, int64_t sb, float* b16) {
    return k4_super512<B>(row, sb, b16);
  }
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m512i bytes512(const uint8_t* row, int64_t p) {
    return nibbles(reinterpret_cast<const B*>(row)[p / 4].qs + (p % 4) * 32);
  }
#endif
};

struct Q5_KP {
  using B = BlockQ5_K;
  static constexpr bool kSuper = true;  // scales per 256-value super-block
  static constexpr int kMaxU = 31;      // largest u byte
  static void pair(const uint8_t* row, int64_t p, int64_t, uint8_t* u, float* a, float* b) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int c = static_cast<int>(p % 4);
    k4_pair_scales(s, c, a, b);
    for (int l = 0; l < 32; ++l) {
      u[l] = static_cast<uint8_t>((s.qs[c * 32 + l] & 0xF) | ((s.qh[l] >> (2 * c)) & 1) << 4);
      u[32 + l] =
          static_cast<uint8_t>((s.qs[c * 32 + l] >> 4) | ((s.qh[l] >> (2 * c + 1)) & 1) << 4);
    }
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI)
  static __m512 super512(const uint8_t* row, int64_t sb, float* b16) {
    return k4_super512<B>(row, sb, b16);
  }
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m512i bytes512(const uint8_t* row, int64_t p) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int c = static_cast<int>(p % 4);
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.qh));
    const __mmask64 hm = static_cast<__mmask64>(_mm256_test_epi8_mask(
                             qh, _mm256_set1_epi8(static_cast<char>(1 << (2 * c))))) |
                         static_cast<__mmask64>(_mm256_test_epi8_mask(
                             qh, _mm256_set1_epi8(static_cast<char>(2 << (2 * c)))))
                             << 32;
    const __m512i lo = Q4_KP::nibbles(s.qs + c * 32);
    return _mm512_mask_add_epi8(lo, hm, lo, _mm512_set1_epi8(16));
  }
#endif
};

#if defined(__x86_64__)
// Four slot values, each repeated over the 4 lanes of its 16 values.
BRISK_INLINE(BRISK_ISA_AVX512VNNI) __m512 quads(__m128 v) {
  return _mm512_permutexvar_ps(_mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
                               _mm512_castps128_ps512(v));
}
#endif

struct Q6_KP {
  using B = BlockQ6_K;
  static constexpr bool kSuper = true;  // scales per 256-value super-block
  static constexpr int kMaxU = 63;      // largest u byte
  static void pair(const uint8_t* row, int64_t p, int64_t, uint8_t* u, float* a, float* b) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int q = static_cast<int>(p % 4), h = q / 2, nib = q % 2;
    const float d = h2f(s.d);
    for (int k = 0; k < 4; ++k) {
      a[k] = d * s.scales[4 * q + k];
      b[k] = -32 * a[k];
    }
    for (int half = 0; half < 2; ++half) {
      const int quarter = 2 * nib + half;
      for (int l = 0; l < 32; ++l) {
        const uint8_t ql = s.ql[h * 64 + half * 32 + l];
        const int lo = nib ? ql >> 4 : ql & 0xF;
        const int hi = (s.qh[h * 32 + l] >> (2 * quarter)) & 3;
        u[half * 32 + l] = static_cast<uint8_t>(lo | hi << 4);
      }
    }
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI)
  static __m512 super512(const uint8_t* row, int64_t sb, float* b16) {
    const B& s = reinterpret_cast<const B*>(row)[sb];
    const __m512 a16 = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(s.d)),
                                     _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(
                                         reinterpret_cast<const __m128i*>(s.scales)))));
    _mm512_storeu_ps(b16, _mm512_mul_ps(a16, _mm512_set1_ps(-32.0f)));
    return a16;
  }
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m512i bytes512(const uint8_t* row, int64_t p) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int q = static_cast<int>(p % 4), h = q / 2, nib = q % 2;
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512i ql = _mm512_loadu_si512(s.ql + h * 64);
    if (nib) ql = _mm512_srli_epi16(ql, 4);
    ql = _mm512_and_si512(ql, m4);
    // Bits 2*quarter..+1 of each qh byte: quarter 2*nib in the low half, 2*nib+1 in the high.
    const __m512i hb = two_bit_fields(s.qh + h * 32, 4 * nib, 4 * nib + 2);
    return _mm512_or_si512(ql, _mm512_slli_epi16(hb, 4));
  }
#endif
};

// IQ4_XS: pair p % 4 of a super-block is its groups 2c and 2c + 1, 16 bytes of indices each.
struct IQ4_XSP {
  using B = BlockIQ4_XS;
  static constexpr bool kSuper = true;  // scales per 256-value super-block
  static constexpr int kMaxU = 241;     // largest u byte
  static void pair(const uint8_t* row, int64_t p, int64_t, uint8_t* u, float* a, float* b) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int c = static_cast<int>(p % 4);
    const float d = h2f(s.d);
    for (int h = 0; h < 2; ++h) {
      const int g = 2 * c + h;
      a[2 * h] = a[2 * h + 1] = d * static_cast<float>(iq4xs_scale(s, g));
      b[2 * h] = b[2 * h + 1] = -128 * a[2 * h];
      iq4_group(s.qs + 16 * g, u + 32 * h);
    }
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI)
  static __m512 super512(const uint8_t* row, int64_t sb, float* b16) {
    const B& s = reinterpret_cast<const B*>(row)[sb];
    alignas(32) int32_t sc[8];
    for (int g = 0; g < 8; ++g) sc[g] = iq4xs_scale(s, g);
    const __m256 a8 =
        _mm256_mul_ps(_mm256_set1_ps(_cvtsh_ss(s.d)),
                      _mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(sc))));
    const __m512i dup = _mm512_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
    const __m512 a16 = _mm512_permutexvar_ps(dup, _mm512_castps256_ps512(a8));
    _mm512_storeu_ps(b16, _mm512_mul_ps(a16, _mm512_set1_ps(-128.0f)));
    return a16;
  }
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m512i bytes512(const uint8_t* row, int64_t p) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.qs + (p % 4) * 32));
    const __m256i m = _mm256_set1_epi8(0x0F);
    const __m256i lo = _mm256_and_si256(v, m), hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
    // Group 2c's low and high nibbles, then group 2c + 1's: the values in order.
    const __m512i idx =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_permute2x128_si256(lo, hi, 0x20)),
                           _mm256_permute2x128_si256(lo, hi, 0x31), 1);
    return _mm512_shuffle_epi8(iq4_table512(), idx);
  }
#endif
};

// Q2_K and Q3_K share the 2-bit layout: pair p % 4 = (half of 128, which two of its 32-groups).
struct Q2_KP {
  using B = BlockQ2_K;
  static constexpr bool kSuper = true;  // scales per 256-value super-block
  static constexpr int kMaxU = 3;       // largest u byte
  static void pair(const uint8_t* row, int64_t p, int64_t, uint8_t* u, float* a, float* b) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int q = static_cast<int>(p % 4), h = q / 2, j0 = 2 * (q % 2);
    const float d = h2f(s.d), dmin = h2f(s.dmin);
    for (int k = 0; k < 4; ++k) {
      const uint8_t sc = s.scales[4 * q + k];
      a[k] = d * static_cast<float>(sc & 0xF);
      b[k] = -dmin * static_cast<float>(sc >> 4);
    }
    for (int half = 0; half < 2; ++half)
      for (int l = 0; l < 32; ++l) u[half * 32 + l] = (s.qs[h * 32 + l] >> (2 * (j0 + half))) & 3;
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m512i crumbs(const uint8_t* qs, int j0) {
    return two_bit_fields(qs, 2 * j0, 2 * j0 + 2);
  }

  BRISK_INLINE(BRISK_ISA_AVX512VNNI)
  static __m512 super512(const uint8_t* row, int64_t sb, float* b16) {
    const B& s = reinterpret_cast<const B*>(row)[sb];
    const __m512i v =
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s.scales)));
    _mm512_storeu_ps(b16, _mm512_mul_ps(_mm512_set1_ps(-_cvtsh_ss(s.dmin)),
                                        _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4))));
    return _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(s.d)),
                         _mm512_cvtepi32_ps(_mm512_and_si512(v, _mm512_set1_epi32(15))));
  }
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m512i bytes512(const uint8_t* row, int64_t p) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int q = static_cast<int>(p % 4);
    return crumbs(s.qs + (q / 2) * 32, 2 * (q % 2));
  }
#endif
};

struct Q3_KP {
  using B = BlockQ3_K;
  static constexpr bool kSuper = true;  // scales per 256-value super-block
  static constexpr int kMaxU = 7;       // largest u byte
  static void pair(const uint8_t* row, int64_t p, int64_t, uint8_t* u, float* a, float* b) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int q = static_cast<int>(p % 4), h = q / 2, j0 = 2 * (q % 2);
    const float d = h2f(s.d);
    int8_t sc[16];
    q3k_scales(s.scales, sc);
    for (int k = 0; k < 4; ++k) a[k] = d * sc[4 * q + k], b[k] = -4 * a[k];
    for (int half = 0; half < 2; ++half) {
      const int j = j0 + half;
      for (int l = 0; l < 32; ++l)
        u[half * 32 + l] = static_cast<uint8_t>(((s.qs[h * 32 + l] >> (2 * j)) & 3) |
                                                ((s.hmask[l] >> (4 * h + j)) & 1) << 2);
    }
  }
#if defined(__x86_64__)
  BRISK_INLINE(BRISK_ISA_AVX512VNNI)
  static __m512 super512(const uint8_t* row, int64_t sb, float* b16) {
    const B& s = reinterpret_cast<const B*>(row)[sb];
    int8_t sc[16];
    q3k_scales(s.scales, sc);  // once per 4 pairs: the forwarding stall of the reload is amortized
    const __m512 a16 = _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(s.d)),
                                     _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(sc)))));
    _mm512_storeu_ps(b16, _mm512_mul_ps(a16, _mm512_set1_ps(-4.0f)));
    return a16;
  }
  BRISK_INLINE(BRISK_ISA_AVX512VNNI) static __m512i bytes512(const uint8_t* row, int64_t p) {
    const B& s = reinterpret_cast<const B*>(row)[p / 4];
    const int q = static_cast<int>(p % 4), h = q / 2, j0 = 2 * (q % 2);
    const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s.hmask));
    const int bit = 4 * h + j0;
    const __mmask64 m = static_cast<__mmask64>(_mm256_test_epi8_mask(
                            hm, _mm256_set1_epi8(static_cast<char>(1 << bit)))) |
                        static_cast<__mmask64>(_mm256_test_epi8_mask(
                            hm, _mm256_set1_epi8(static_cast<char>(2 << bit))))
                            << 32;
    const __m512i lo = Q2_KP::crumbs(s.qs + h * 32, j0);
    return _mm512_mask_add_epi8(lo, m, lo, _mm512_set1_epi8(4));
  }
#endif
};

#if defined(__x86_64__)
#include "ops/matmul_quant_iq-inl.h"
#endif

// ---------------------------------------------------------------------------------------------
// Kernels

// The grid i-quants and the ternary types read XFormat::Q8K activations: a super-block's integer
// sum of S[g] * q * x (core/quant_iq.h's iq_int_scales) is exact whatever order a tier adds in,
// and this one step per super-block, the same on every tier, takes it to float.
inline float grid_step(float acc, int32_t sum, float dw, float dx) {
  return std::fma(static_cast<float>(sum), dw * dx, acc);
}
// A grid kernel's T tokens (one row at a time): their Q8K rows and accumulators.
template <int T>
struct GridTokens {
  const int8_t* x[T];
  const float* dx[T];
  const int16_t* s8[T];
  float acc[T] = {};
  GridTokens(const Args& a, int64_t t, const Q8KLayout& L) {
    for (int j = 0; j < T; ++j) {
      const uint8_t* row = a.x + (t + j) * a.x_stride;
      x[j] = reinterpret_cast<const int8_t*>(row);
      dx[j] = reinterpret_cast<const float*>(row + L.d_off);
      s8[j] = reinterpret_cast<const int16_t*>(row + L.s8_off);
    }
  }
  // Token j's values of super-block sb.
  const int8_t* block(int j, int64_t sb) const { return x[j] + sb * 256; }
  // Token j's 32 sums of 8 values of super-block sb.
  const int16_t* sums8(int j, int64_t sb) const { return s8[j] + sb * 32; }
  // Super-block sb's integer sums of the T tokens, its weights' factor dw.
  void steps(int64_t sb, const int32_t (&sums)[T], float dw) {
    for (int j = 0; j < T; ++j) acc[j] = grid_step(acc[j], sums[j], dw, dx[j][sb]);
  }
  void store(const Args& a, int64_t r, int64_t t) const {
    for (int j = 0; j < T; ++j) a.y[(t + j) * a.ldy + r] = acc[j];
  }
};
// A tier's Pick for kernel_for_type, named Name: tile_loop over its micro-kernels fn<P, R, T>
// (R rows by T tokens, each up to 4) for decoder P, and over grid<B, T> for the grid types' blocks
// B. A grid kernel takes one row (its super-blocks are decoded once for the T tokens, and rows
// share nothing), so R rows are R calls: one copy of its code per T, not ten.
#define BRISK_QUANT_PICK(Name, fn, grid)                               \
  struct Name {                                                        \
    template <class P>                                                 \
    struct Table {                                                     \
      template <int R, int T>                                          \
      static void run(const Args& a, int64_t r, int64_t t) {           \
        fn<P, R, T>(a, r, t);                                          \
      }                                                                \
      static constexpr MicroFn kMicro[4][4] = BRISK_MICRO_TABLE4(run); \
    };                                                                 \
    template <class B>                                                 \
    struct GridTable {                                                 \
      template <int R, int T>                                          \
      static void run(const Args& a, int64_t r, int64_t t) {           \
        for (int i = 0; i < R; ++i) grid<B, T>(a, r + i, t);           \
      }                                                                \
      static constexpr MicroFn kMicro[4][4] = BRISK_MICRO_TABLE4(run); \
    };                                                                 \
    template <class P>                                                 \
    static Kernel of() {                                               \
      return {tile_loop<4, Table<P>::kMicro>, XFormat::Q8};            \
    }                                                                  \
    template <class B>                                                 \
    static Kernel of_grid() {                                          \
      return {tile_loop<4, GridTable<B>::kMicro>, XFormat::Q8K};       \
    }                                                                  \
  }

// Pick::of<P>() for the decoder P of type t (a null kernel for types without one): the one list of
// types and decoders, which every tier's kernel file instantiates.
template <class Pick>
Kernel kernel_for_type(DType t) {
  switch (t) {
    case DType::Q4_0:
      return Pick::template of<Legacy<Q4_0P>>();
    case DType::Q4_1:
      return Pick::template of<Legacy<Q4_1P>>();
    case DType::Q5_0:
      return Pick::template of<Legacy<Q5_0P>>();
    case DType::Q5_1:
      return Pick::template of<Legacy<Q5_1P>>();
    case DType::Q8_0:
      return Pick::template of<Legacy<Q8_0P>>();
    case DType::Q2_K:
      return Pick::template of<Q2_KP>();
    case DType::Q3_K:
      return Pick::template of<Q3_KP>();
    case DType::Q4_K:
      return Pick::template of<Q4_KP>();
    case DType::Q5_K:
      return Pick::template of<Q5_KP>();
    case DType::Q6_K:
      return Pick::template of<Q6_KP>();
    case DType::IQ4_NL:
      return Pick::template of<Legacy<IQ4_NLP>>();
    case DType::MXFP4:
      return Pick::template of<Legacy<MXFP4P>>();
    case DType::IQ4_XS:
      return Pick::template of<IQ4_XSP>();
    case DType::IQ2_XXS:
      return Pick::template of_grid<BlockIQ2_XXS>();
    case DType::IQ2_XS:
      return Pick::template of_grid<BlockIQ2_XS>();
    case DType::IQ2_S:
      return Pick::template of_grid<BlockIQ2_S>();
    case DType::IQ3_XXS:
      return Pick::template of_grid<BlockIQ3_XXS>();
    case DType::IQ3_S:
      return Pick::template of_grid<BlockIQ3_S>();
    case DType::IQ1_S:
      return Pick::template of_grid<BlockIQ1_S>();
    case DType::IQ1_M:
      return Pick::template of_grid<BlockIQ1_M>();
    case DType::TQ1_0:
      return Pick::template of_grid<BlockTQ1_0>();
    case DType::TQ2_0:
      return Pick::template of_grid<BlockTQ2_0>();
    default:
      return {nullptr, XFormat::Q8};
  }
}
