// The AVX-512 attention kernels: head sizes that are multiples of 8 up to 256, every KV type.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ops/attention_chunk.h"
#include "ops/isa_target.h"
#include "ops/simd_math-inl.h"

namespace brisk::attention_detail {
#if defined(__x86_64__)
namespace {

// Widen 16 stored elements to floats; `at` with a mask reads only the lanes it sets (and zeroes
// the others), so a row's tail past a head size that is not a multiple of 16 is never read.
struct LoadF32 {
  static constexpr KvType kType = KvType::F32;
  BRISK_TARGET(BRISK_ISA_AVX512) static __m512 at(const void* p, int i) {
    return _mm512_loadu_ps(static_cast<const float*>(p) + i);
  }
  BRISK_TARGET(BRISK_ISA_AVX512) static __m512 at(const void* p, int i, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, static_cast<const float*>(p) + i);
  }
};
struct LoadF16 {
  static constexpr KvType kType = KvType::F16;
  BRISK_TARGET(BRISK_ISA_AVX512) static __m512 at(const void* p, int i) {
    return _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(p) + i)));
  }
  BRISK_TARGET(BRISK_ISA_AVX512) static __m512 at(const void* p, int i, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(p) + i));
  }
};
struct LoadBF16 {
  static constexpr KvType kType = KvType::BF16;
  BRISK_TARGET(BRISK_ISA_AVX512) static __m512 at(const void* p, int i) {
    const __m256i h =
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(p) + i));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  BRISK_TARGET(BRISK_ISA_AVX512) static __m512 at(const void* p, int i, __mmask16 m) {
    const __m256i h = _mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(p) + i);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
};
struct LoadQ8 {
  static constexpr KvType kType = KvType::Q8;
  BRISK_TARGET(BRISK_ISA_AVX512) static __m512 at(const void* p, int i) {
    const __m128i b =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const int8_t*>(p) + i));
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
  }
  BRISK_TARGET(BRISK_ISA_AVX512) static __m512 at(const void* p, int i, __mmask16 m) {
    const __m128i b = _mm_maskz_loadu_epi8(m, static_cast<const int8_t*>(p) + i);
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
  }
};

// A head of HD floats as VP vectors of 16 lanes; the last one holds kTail lanes when HD is not a
// multiple of 16, and is read with that mask.
template <int HD>
struct HeadVecs {
  static constexpr int VP = (HD + 15) / 16;
  static constexpr int kTail = HD - 16 * (VP - 1);
  static constexpr __mmask16 mask(int b) {
    return b == VP - 1 ? static_cast<__mmask16>((1u << kTail) - 1) : static_cast<__mmask16>(0xffff);
  }
  template <class Load>
  BRISK_TARGET(BRISK_ISA_AVX512)
  static __m512 load(const void* p, int b) {
    if constexpr (kTail == 16)
      return Load::at(p, 16 * b);
    else
      return b == VP - 1 ? Load::at(p, 16 * b, mask(b)) : Load::at(p, 16 * b);
  }
};

// A chunk's keys transposed (kt[d] holds dimension d of its 16 keys, so a query's 16 scores come
// out of HD multiply-adds with no reduction across lanes) and its values as rows of floats.
template <int HD>
struct alignas(64) Chunk {
  float kt[HD][16];
  float v[kAttnChunk][16 * HeadVecs<HD>::VP];
  const float* vrow[kAttnChunk];
};

// Rows i and i + 8 of a chunk (8 elements each, widened) side by side in one vector; zero past n.
template <class Load>
BRISK_TARGET(BRISK_ISA_AVX512)
inline __m512 row_pair(const void* const* rows, int i, int n) {
  const __m256 lo =
      i < n ? _mm512_castps512_ps256(Load::at(rows[i], 0, 0xff)) : _mm256_setzero_ps();
  const __m256 hi =
      i + 8 < n ? _mm512_castps512_ps256(Load::at(rows[i + 8], 0, 0xff)) : _mm256_setzero_ps();
  return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1);
}

// Head size 8: a full 16x16 transpose would be half padding, so rows i and i + 8 share a vector
// and one 8x8 transpose per half gives kt[d] (dimension d of the 16 keys, in key order). Values
// stay paired: v[i] holds rows i and i + 8, so one multiply-add covers two keys and each head keeps
// two partial accumulators (keys 0-7 and 8-15 of every chunk), added at the end.
template <class Load, int HD>
BRISK_TARGET(BRISK_ISA_AVX512)
void load_chunk8(const ChunkRows& c, int n, Chunk<HD>& ch) {
  __m512 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = row_pair<Load>(c.k, i, n);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int g = 0; g < 8; g += 4) {  // dims (0, 4), (1, 5), (2, 6), (3, 7) of rows g..g+3
    u[g] = _mm512_shuffle_ps(t[g], t[g + 2], 0x44);
    u[g + 1] = _mm512_shuffle_ps(t[g], t[g + 2], 0xee);
    u[g + 2] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0x44);
    u[g + 3] = _mm512_shuffle_ps(t[g + 1], t[g + 3], 0xee);
  }
  const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 8, 9, 10, 11, 24, 25, 26, 27);
  const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(4));
  for (int d = 0; d < 4; ++d) {
    _mm512_store_ps(ch.kt[d], _mm512_permutex2var_ps(u[d], lo, u[d + 4]));
    _mm512_store_ps(ch.kt[d + 4], _mm512_permutex2var_ps(u[d], hi, u[d + 4]));
  }
  for (int i = 0; i < 8; ++i) _mm512_store_ps(ch.v[i], row_pair<Load>(c.v, i, n));
}

template <int HD, class Load>
BRISK_TARGET(BRISK_ISA_AVX512)
void load_chunk(const ChunkRows& c, int n, Chunk<HD>& ch) {
  if constexpr (HD == 8) return load_chunk8<Load>(c, n, ch);
  using HV = HeadVecs<HD>;
  for (int b = 0; b < HV::VP; ++b) {
    __m512 r[16], t[16];
    for (int j = 0; j < 16; ++j)
      r[j] = j < n ? HV::template load<Load>(c.k[j], b) : _mm512_setzero_ps();
    transpose16(r, t);
    for (int i = 0; i < 16 && 16 * b + i < HD; ++i) _mm512_store_ps(ch.kt[16 * b + i], t[i]);
  }
  for (int j = 0; j < n; ++j) {
    if constexpr (Load::kType == KvType::F32) {
      ch.vrow[j] = static_cast<const float*>(c.v[j]);  // read in place
    } else {
      for (int b = 0; b < HV::VP; ++b)
        _mm512_store_ps(&ch.v[j][16 * b], HV::template load<Load>(c.v[j], b));
      ch.vrow[j] = ch.v[j];
    }
  }
}

// A query head's running state: output accumulator, lane-wise softmax sum, running maximum.
template <int HD>
struct alignas(64) HeadState {
  float acc[16 * HeadVecs<HD>::VP];  // the lanes past HD stay zero
  float l[16];
  float m;
};

// H query heads over the first n (1..16) keys of a chunk. Each head's arithmetic is the same
// whatever H: several heads at once only share the loads and overlap their dependency chains.
template <int HD, bool Q8, int H>
BRISK_TARGET(BRISK_ISA_AVX512)
inline void attend_chunk(const float* const* q, const Chunk<HD>& ch, int lo, int n, __m512 kscale,
                         __m512 vscale, float cap, HeadState<HD>* const* st) {
  using HV = HeadVecs<HD>;
  constexpr int V = HV::VP;
  __m512 s4[H][4];
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < 4; ++i) s4[h][i] = _mm512_setzero_ps();
  for (int d = 0; d < HD; d += 4)
    for (int i = 0; i < 4; ++i) {
      const __m512 k = _mm512_load_ps(ch.kt[d + i]);
      for (int h = 0; h < H; ++h)
        s4[h][i] = _mm512_fmadd_ps(_mm512_set1_ps(q[h][d + i]), k, s4[h][i]);
    }
  const __mmask16 live = static_cast<__mmask16>(((1u << n) - 1) & ~((1u << lo) - 1));
  __m512 acc[H][V];
  alignas(64) float pj[H][kAttnChunk];
  for (int h = 0; h < H; ++h) {
    __m512 raw = _mm512_mul_ps(
        _mm512_add_ps(_mm512_add_ps(s4[h][0], s4[h][1]), _mm512_add_ps(s4[h][2], s4[h][3])),
        kscale);
    if (cap > 0)  // soft-capping: cap tanh(s / cap)
      raw = _mm512_mul_ps(_mm512_set1_ps(cap),
                          tanh16(_mm512_mul_ps(raw, _mm512_set1_ps(1.0f / cap))));
    const __m512 scores =
        _mm512_mask_blend_ps(live, _mm512_set1_ps(-std::numeric_limits<float>::infinity()), raw);
    HeadState<HD>& sh = *st[h];
    const float mx = std::max(sh.m, _mm512_reduce_max_ps(scores));
    for (int d = 0; d < V; ++d) acc[h][d] = _mm512_load_ps(sh.acc + 16 * d);
    __m512 l = _mm512_load_ps(sh.l);
    if (mx > sh.m) {  // else the correction is exp(0) = 1 exactly
      const __m512 corr = _mm512_set1_ps(std::exp(sh.m - mx));  // exp(-inf) = 0 at first
      for (int d = 0; d < V; ++d) acc[h][d] = _mm512_mul_ps(acc[h][d], corr);
      l = _mm512_mul_ps(l, corr);
      sh.m = mx;
    }
    __m512 p = _mm512_maskz_mov_ps(live, exp16(_mm512_sub_ps(scores, _mm512_set1_ps(mx))));
    _mm512_store_ps(sh.l, _mm512_add_ps(l, p));
    if constexpr (Q8) p = _mm512_mul_ps(p, vscale);
    _mm512_store_ps(pj[h], p);
  }
  if constexpr (HD == 8) {
    __m512 p[H];
    for (int h = 0; h < H; ++h) p[h] = _mm512_load_ps(pj[h]);
    for (int i = 0; i < std::min(n, 8); ++i) {
      const __m512 v = _mm512_load_ps(ch.v[i]);
      const __m512i pick = _mm512_inserti64x4(_mm512_set1_epi32(i), _mm256_set1_epi32(i + 8), 1);
      for (int h = 0; h < H; ++h)
        acc[h][0] = _mm512_fmadd_ps(_mm512_permutexvar_ps(pick, p[h]), v, acc[h][0]);
    }
  } else {
    for (int j = 0; j < n; ++j)
      for (int d = 0; d < V; ++d) {
        const __m512 v = HV::template load<LoadF32>(ch.vrow[j], d);
        for (int h = 0; h < H; ++h)
          acc[h][d] = _mm512_fmadd_ps(_mm512_set1_ps(pj[h][j]), v, acc[h][d]);
      }
  }
  for (int h = 0; h < H; ++h)
    for (int d = 0; d < V; ++d) _mm512_store_ps(st[h]->acc + 16 * d, acc[h][d]);
}

// Head sizes that are multiples of 8 (up to 256). Chunk by chunk, the keys and values are loaded
// (and widened, and the keys transposed) once and used by every query head of every query.
template <int HD, class Load>
BRISK_TARGET(BRISK_ISA_AVX512)
void attend_avx512(const AttnShape& s, int kv_head, const AttnQuery* qs, int nq,
                   const KvSpan* spans, size_t n_spans) {
  constexpr bool kQ8 = Load::kType == KvType::Q8;
  // Query heads computed together, as registers allow.
  constexpr int kPair = HD <= 64 ? 4 : HD <= 128 ? 2 : 1;
  const int gq = s.n_head / s.n_head_kv;
  thread_local std::vector<HeadState<HD>> states;
  states.resize(static_cast<size_t>(nq) * gq);
  int64_t max_keys = 0;
  for (auto& st : states) {
    std::fill(std::begin(st.acc), std::end(st.acc), 0.0f);
    std::fill(std::begin(st.l), std::end(st.l), 0.0f);
    st.m = -std::numeric_limits<float>::infinity();
  }
  for (int i = 0; i < nq; ++i) max_keys = std::max(max_keys, qs[i].n_keys);
  thread_local Chunk<HD> ch;
  ChunkRows c{};  // (Q8 scales past a short chunk's end are read, then multiplied by zero)
  size_t span = 0;
  const __m512 scale = _mm512_set1_ps(s.scale);
  for (int64_t p0 = first_chunk(qs, nq); p0 < max_keys; p0 += kAttnChunk) {
    const int nc = static_cast<int>(std::min<int64_t>(kAttnChunk, max_keys - p0));
    gather<Load::kType>(s, kv_head, spans, n_spans, span, p0, nc, c);
    load_chunk<HD, Load>(c, nc, ch);
    const __m512 kscale = kQ8 ? _mm512_mul_ps(_mm512_loadu_ps(c.ks), scale) : scale;
    const __m512 vscale = kQ8 ? _mm512_loadu_ps(c.vs) : scale;
    for (int i = 0; i < nq; ++i) {
      if (!reads_chunk(qs[i], p0)) continue;
      const int n = static_cast<int>(std::min<int64_t>(kAttnChunk, qs[i].n_keys - p0));
      const int lo = skipped_keys(qs[i], p0);
      const float* qh[kPair];
      HeadState<HD>* sh[kPair];
      int h = 0;
      auto at = [&](int k, int hh) {
        qh[k] = qs[i].q + static_cast<int64_t>(kv_head * gq + hh) * HD;
        sh[k] = &states[static_cast<size_t>(i * gq + hh)];
      };
      for (; h + kPair <= gq; h += kPair) {
        for (int k = 0; k < kPair; ++k) at(k, h + k);
        attend_chunk<HD, kQ8, kPair>(qh, ch, lo, n, kscale, vscale, s.softcap, sh);
      }
      // The remaining heads together (as many as are left: the bits are the same either way).
      const int left = gq - h;
      for (int k = 0; k < left; ++k) at(k, h + k);
      if (left == 1) {
        attend_chunk<HD, kQ8, 1>(qh, ch, lo, n, kscale, vscale, s.softcap, sh);
      } else if constexpr (kPair > 2) {
        if (left == 2)
          attend_chunk<HD, kQ8, 2>(qh, ch, lo, n, kscale, vscale, s.softcap, sh);
        else if (left == 3)
          attend_chunk<HD, kQ8, 3>(qh, ch, lo, n, kscale, vscale, s.softcap, sh);
      }
    }
  }
  for (int i = 0; i < nq; ++i)
    for (int h = 0; h < gq; ++h) {
      const HeadState<HD>& st = states[static_cast<size_t>(i * gq + h)];
      float* o = qs[i].out + static_cast<int64_t>(kv_head * gq + h) * HD;
      const float l = _mm512_reduce_add_ps(_mm512_load_ps(st.l));
      const __m512 inv = _mm512_set1_ps(output_scale(st.m, l, s.sinks, kv_head * gq + h));
      if constexpr (HD == 8) {
        const __m512 a = _mm512_load_ps(st.acc);
        const __m256 sum = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
        _mm256_storeu_ps(o, _mm256_mul_ps(sum, _mm512_castps512_ps256(inv)));
        continue;
      }
      for (int d = 0; d < HeadVecs<HD>::VP; ++d)
        _mm512_mask_storeu_ps(o + 16 * d, HeadVecs<HD>::mask(d),
                              _mm512_mul_ps(_mm512_load_ps(st.acc + 16 * d), inv));
    }
}

template <int HD, class Load>
struct Avx512Kernel {
  static constexpr AttendFn fn = attend_avx512<HD, Load>;
};
}  // namespace
#endif

AttendFn attend_avx512([[maybe_unused]] KvType t, [[maybe_unused]] int head_dim) {
#if defined(__x86_64__)
  return pick_kernel<Avx512Kernel, LoadF32, LoadF16, LoadBF16, LoadQ8>(t, head_dim);
#else
  return nullptr;
#endif
}

}  // namespace brisk::attention_detail
