// The AVX2 attention kernels: head sizes that are multiples of 8 up to 256, every KV type. The
// scheme of the AVX-512 kernels on 8-lane vectors: a chunk's 16 keys are loaded (widened) and
// transposed once for every query head of every query of the group, so a head's 16 scores are
// two vectors of multiply-adds with no reduction across lanes; the softmax's exponentials are
// vectorized (exp8) and the values' weighted sum runs over the chunk's rows.
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

// 8 stored elements, widened to floats.
struct Load8F32 {
  static constexpr KvType kType = KvType::F32;
  BRISK_TARGET(BRISK_ISA_AVX2) static __m256 at(const void* p, int i) {
    return _mm256_loadu_ps(static_cast<const float*>(p) + i);
  }
};
struct Load8F16 {
  static constexpr KvType kType = KvType::F16;
  BRISK_TARGET(BRISK_ISA_AVX2) static __m256 at(const void* p, int i) {
    return _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + i)));
  }
};
struct Load8BF16 {
  static constexpr KvType kType = KvType::BF16;
  BRISK_TARGET(BRISK_ISA_AVX2) static __m256 at(const void* p, int i) {
    const __m128i h =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(p) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
};
struct Load8Q8 {
  static constexpr KvType kType = KvType::Q8;
  BRISK_TARGET(BRISK_ISA_AVX2) static __m256 at(const void* p, int i) {
    const __m128i b =
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(static_cast<const int8_t*>(p) + i));
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
  }
};

// kt[d] holds dimension d of the chunk's 16 keys (keys 0-7, then 8-15); v the values widened
// (f32 values are read in place through vrow).
template <int HD>
struct alignas(32) Chunk8 {
  float kt[HD][16];
  float v[kAttnChunk][HD];
  const float* vrow[kAttnChunk];
};

template <int HD, class Load>
BRISK_TARGET(BRISK_ISA_AVX2)
void load_chunk(const ChunkRows& c, int n, Chunk8<HD>& ch) {
  for (int b = 0; b < HD / 8; ++b)
    for (int half = 0; half < 2; ++half) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) {
        const int j = 8 * half + i;
        r[i] = j < n ? Load::at(c.k[j], 8 * b) : _mm256_setzero_ps();
      }
      transpose8(r);
      for (int d = 0; d < 8; ++d) _mm256_store_ps(ch.kt[8 * b + d] + 8 * half, r[d]);
    }
  for (int j = 0; j < n; ++j) {
    if constexpr (Load::kType == KvType::F32) {
      ch.vrow[j] = static_cast<const float*>(c.v[j]);
    } else {
      for (int b = 0; b < HD / 8; ++b) _mm256_store_ps(&ch.v[j][8 * b], Load::at(c.v[j], 8 * b));
      ch.vrow[j] = ch.v[j];
    }
  }
}

// A query head's running state: output accumulator, lane-wise softmax sum, running maximum.
template <int HD>
struct alignas(32) HeadState8 {
  float acc[HD];
  float l[16];
  float m;
};

// H query heads over the first n (1..16) keys of a chunk; ks: each key's score scale (the
// attention scale, times the key's scale for Q8), vs: each value's scale (Q8) or nullptr. A head's
// arithmetic is the same whatever H.
template <int HD, int H>
BRISK_TARGET(BRISK_ISA_AVX2)
inline void attend_chunk(const float* const* q, const Chunk8<HD>& ch, int lo, int n,
                         const float* ks, const float* vs, float cap, HeadState8<HD>* const* st) {
  __m256 s[H][2][2];  // [head][keys 0-7, 8-15][even, odd dimensions]
  for (int h = 0; h < H; ++h)
    for (int i = 0; i < 2; ++i) s[h][i][0] = s[h][i][1] = _mm256_setzero_ps();
  for (int d = 0; d < HD; d += 2)
    for (int e = 0; e < 2; ++e) {
      const __m256 k0 = _mm256_load_ps(ch.kt[d + e]), k1 = _mm256_load_ps(ch.kt[d + e] + 8);
      for (int h = 0; h < H; ++h) {
        const __m256 qd = _mm256_set1_ps(q[h][d + e]);
        s[h][0][e] = _mm256_fmadd_ps(qd, k0, s[h][0][e]);
        s[h][1][e] = _mm256_fmadd_ps(qd, k1, s[h][1][e]);
      }
    }
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // Lanes lo <= j < n hold keys the queries read.
  const __m256i j8 = _mm256_add_epi32(iota, _mm256_set1_epi32(8));
  const __m256i vlo = _mm256_set1_epi32(lo), vn = _mm256_set1_epi32(n);
  const __m256 live[2] = {_mm256_castsi256_ps(_mm256_andnot_si256(_mm256_cmpgt_epi32(vlo, iota),
                                                                  _mm256_cmpgt_epi32(vn, iota))),
                          _mm256_castsi256_ps(_mm256_andnot_si256(_mm256_cmpgt_epi32(vlo, j8),
                                                                  _mm256_cmpgt_epi32(vn, j8)))};
  const __m256 ninf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  alignas(32) float pj[H][kAttnChunk];
  float corr[H];
  for (int h = 0; h < H; ++h) {
    __m256 sc[2];
    for (int i = 0; i < 2; ++i) {
      __m256 raw = _mm256_mul_ps(_mm256_add_ps(s[h][i][0], s[h][i][1]), _mm256_load_ps(ks + 8 * i));
      if (cap > 0)  // soft-capping: cap tanh(s / cap)
        raw = _mm256_mul_ps(_mm256_set1_ps(cap),
                            tanh8(_mm256_mul_ps(raw, _mm256_set1_ps(1.0f / cap))));
      sc[i] = _mm256_blendv_ps(ninf, raw, live[i]);
    }
    HeadState8<HD>& sh = *st[h];
    const float mx = std::max(sh.m, hmax8(_mm256_max_ps(sc[0], sc[1])));
    corr[h] = mx > sh.m ? std::exp(sh.m - mx) : 1.0f;  // exp(-inf) = 0 at first; x * 1 is exact
    sh.m = mx;
    for (int i = 0; i < 2; ++i) {
      __m256 p = _mm256_and_ps(exp8(_mm256_sub_ps(sc[i], _mm256_set1_ps(mx))), live[i]);
      const __m256 l = _mm256_mul_ps(_mm256_load_ps(sh.l + 8 * i), _mm256_set1_ps(corr[h]));
      _mm256_store_ps(sh.l + 8 * i, _mm256_add_ps(l, p));
      if (vs) p = _mm256_mul_ps(p, _mm256_loadu_ps(vs + 8 * i));
      _mm256_store_ps(pj[h] + 8 * i, p);
    }
  }
  // Values, G vectors of each head's accumulator at a time (16 registers).
  constexpr int G = std::min(HD / 8, 8 / H);
  for (int d0 = 0; d0 < HD / 8; d0 += G) {
    const int gn = std::min(G, HD / 8 - d0);
    __m256 a[H][G];
    for (int h = 0; h < H; ++h)
      for (int g = 0; g < G; ++g)
        if (g < gn)
          a[h][g] =
              _mm256_mul_ps(_mm256_load_ps(st[h]->acc + 8 * (d0 + g)), _mm256_set1_ps(corr[h]));
    for (int j = 0; j < n; ++j)
      for (int g = 0; g < G; ++g)
        if (g < gn) {
          const __m256 v = _mm256_loadu_ps(ch.vrow[j] + 8 * (d0 + g));
          for (int h = 0; h < H; ++h)
            a[h][g] = _mm256_fmadd_ps(_mm256_set1_ps(pj[h][j]), v, a[h][g]);
        }
    for (int h = 0; h < H; ++h)
      for (int g = 0; g < G; ++g)
        if (g < gn) _mm256_store_ps(st[h]->acc + 8 * (d0 + g), a[h][g]);
  }
}

template <int HD, class Load>
BRISK_TARGET(BRISK_ISA_AVX2)
void attend(const AttnShape& s, int kv_head, const AttnQuery* qs, int nq, const KvSpan* spans,
            size_t n_spans) {
  constexpr bool kQ8 = Load::kType == KvType::Q8;
  constexpr int kPair = 2;  // query heads computed together, as 16 registers allow
  const int gq = s.n_head / s.n_head_kv;
  thread_local std::vector<HeadState8<HD>> states;
  states.resize(static_cast<size_t>(nq) * gq);
  for (auto& st : states) {
    std::fill(std::begin(st.acc), std::end(st.acc), 0.0f);
    std::fill(std::begin(st.l), std::end(st.l), 0.0f);
    st.m = -std::numeric_limits<float>::infinity();
  }
  int64_t max_keys = 0;
  for (int i = 0; i < nq; ++i) max_keys = std::max(max_keys, qs[i].n_keys);
  thread_local Chunk8<HD> ch;
  ChunkRows c{};  // (Q8 scales past a short chunk's end are read, then multiplied by zero)
  size_t span = 0;
  alignas(32) float ks[kAttnChunk];
  std::fill(std::begin(ks), std::end(ks), s.scale);
  for (int64_t p0 = first_chunk(qs, nq); p0 < max_keys; p0 += kAttnChunk) {
    const int nc = static_cast<int>(std::min<int64_t>(kAttnChunk, max_keys - p0));
    gather<Load::kType>(s, kv_head, spans, n_spans, span, p0, nc, c);
    load_chunk<HD, Load>(c, nc, ch);
    if constexpr (kQ8)  // (else every key's scale is the attention scale, set once)
      for (int j = 0; j < kAttnChunk; ++j) ks[j] = c.ks[j] * s.scale;
    const float* vs = kQ8 ? c.vs : nullptr;
    for (int i = 0; i < nq; ++i) {
      if (!reads_chunk(qs[i], p0)) continue;
      const int n = static_cast<int>(std::min<int64_t>(kAttnChunk, qs[i].n_keys - p0));
      const int lo = skipped_keys(qs[i], p0);
      const float* qh[kPair];
      HeadState8<HD>* sh[kPair];
      auto at = [&](int k, int hh) {
        qh[k] = qs[i].q + static_cast<int64_t>(kv_head * gq + hh) * HD;
        sh[k] = &states[static_cast<size_t>(i * gq + hh)];
      };
      int h = 0;
      for (; h + kPair <= gq; h += kPair) {
        for (int k = 0; k < kPair; ++k) at(k, h + k);
        attend_chunk<HD, kPair>(qh, ch, lo, n, ks, vs, s.softcap, sh);
      }
      if (h < gq) {
        at(0, h);
        attend_chunk<HD, 1>(qh, ch, lo, n, ks, vs, s.softcap, sh);
      }
    }
  }
  for (int i = 0; i < nq; ++i)
    for (int h = 0; h < gq; ++h) {
      const HeadState8<HD>& st = states[static_cast<size_t>(i * gq + h)];
      float* o = qs[i].out + static_cast<int64_t>(kv_head * gq + h) * HD;
      const float l = hsum8(_mm256_add_ps(_mm256_load_ps(st.l), _mm256_load_ps(st.l + 8)));
      const __m256 inv = _mm256_set1_ps(output_scale(st.m, l, s.sinks, kv_head * gq + h));
      for (int d = 0; d < HD / 8; ++d)
        _mm256_storeu_ps(o + 8 * d, _mm256_mul_ps(_mm256_load_ps(st.acc + 8 * d), inv));
    }
}

template <int HD, class Load>
struct Avx2Kernel {
  static constexpr AttendFn fn = attend<HD, Load>;
};
}  // namespace
#endif

AttendFn attend_avx2([[maybe_unused]] KvType t, [[maybe_unused]] int head_dim) {
#if defined(__x86_64__)
  return pick_kernel<Avx2Kernel, Load8F32, Load8F16, Load8BF16, Load8Q8>(t, head_dim);
#else
  return nullptr;
#endif
}

}  // namespace brisk::attention_detail
