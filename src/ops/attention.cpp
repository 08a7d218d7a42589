#include "ops/attention.h"

#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu.h"
#include "ops/simd_math-inl.h"

// GCC 12 reports its own AVX-512 intrinsic headers as using uninitialized values.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace brisk {
namespace {

// Gathers the K/V row pointers of positions [p0, p0 + n) of one KV head from the spans.
struct ChunkRows {
  const float* k[kAttnChunk];
  const float* v[kAttnChunk];
};

inline void gather(const AttnShape& s, int64_t koff, const KvSpan* spans, size_t n_spans,
                   size_t& span, int64_t p0, int n, ChunkRows& c) {
  for (int j = 0; j < n; ++j) {
    const int64_t pos = p0 + j;
    while (span + 1 < n_spans && pos >= spans[span].pos0 + spans[span].n) ++span;
    const KvSpan& sp = spans[span];
    const int64_t off = (pos - sp.pos0) * s.kv_stride + koff;
    c.k[j] = sp.k + off;
    c.v[j] = sp.v + off;
  }
}

inline float dot(const float* a, const float* b, int n) {
  float part[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) part[l] += a[i + l] * b[i + l];
  for (; i < n; ++i) part[0] += a[i] * b[i];
  return ((part[0] + part[4]) + (part[2] + part[6])) + ((part[1] + part[5]) + (part[3] + part[7]));
}

// Portable version: any head size.
void attend_generic(const AttnShape& s, int kv_head, const float* q, int64_t n_keys,
                    const KvSpan* spans, size_t n_spans, float* out) {
  const int gq = s.n_head / s.n_head_kv, hd = s.head_dim;
  thread_local std::vector<float> acc;
  acc.assign(static_cast<size_t>(gq) * hd, 0.0f);
  float m[64], l[64];
  for (int h = 0; h < gq; ++h) m[h] = -std::numeric_limits<float>::infinity(), l[h] = 0;
  ChunkRows c;
  size_t span = 0;
  for (int64_t p0 = 0; p0 < n_keys; p0 += kAttnChunk) {
    const int n = static_cast<int>(std::min<int64_t>(kAttnChunk, n_keys - p0));
    gather(s, static_cast<int64_t>(kv_head) * hd, spans, n_spans, span, p0, n, c);
    for (int h = 0; h < gq; ++h) {
      const float* qh = q + static_cast<int64_t>(kv_head * gq + h) * hd;
      float sc[kAttnChunk];
      float mx = m[h];
      for (int j = 0; j < n; ++j) {
        sc[j] = dot(qh, c.k[j], hd) * s.scale;
        mx = sc[j] > mx ? sc[j] : mx;
      }
      const float corr = std::exp(m[h] - mx);  // exp(-inf) = 0 on the first chunk
      float* a = acc.data() + static_cast<int64_t>(h) * hd;
      float sum = l[h] * corr;
      for (int d = 0; d < hd; ++d) a[d] *= corr;
      for (int j = 0; j < n; ++j) {
        const float pj = std::exp(sc[j] - mx);
        sum += pj;
        for (int d = 0; d < hd; ++d) a[d] += pj * c.v[j][d];
      }
      l[h] = sum;
      m[h] = mx;
    }
  }
  for (int h = 0; h < gq; ++h) {
    float* o = out + static_cast<int64_t>(kv_head * gq + h) * hd;
    const float inv = l[h] > 0 ? 1.0f / l[h] : 0.0f;
    for (int d = 0; d < hd; ++d) o[d] = acc[static_cast<size_t>(h * hd + d)] * inv;
  }
}

#if defined(__x86_64__)

// Sums each of 16 vectors' lanes: out[j] = sum of v[j]'s 16 lanes, in one fixed order, with about
// 45 shuffles and adds instead of 16 separate horizontal reductions.
BRISK_AVX512 inline __m512 reduce16x16(const __m512 (&v)[16]) {
  __m512 a[8], b[4];
  for (int i = 0; i < 8; ++i)
    a[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                         _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  for (int i = 0; i < 4; ++i) {
    const __m512d x = _mm512_castps_pd(a[2 * i]), y = _mm512_castps_pd(a[2 * i + 1]);
    b[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
  }
  // b[i] holds, in each 128-bit block, partial sums of inputs 4i..4i+3; add the four blocks.
  const __m512 u01 =
      _mm512_add_ps(_mm512_shuffle_f32x4(b[0], b[1], 0x88), _mm512_shuffle_f32x4(b[0], b[1], 0xdd));
  const __m512 u23 =
      _mm512_add_ps(_mm512_shuffle_f32x4(b[2], b[3], 0x88), _mm512_shuffle_f32x4(b[2], b[3], 0xdd));
  return _mm512_add_ps(_mm512_shuffle_f32x4(u01, u23, 0x88), _mm512_shuffle_f32x4(u01, u23, 0xdd));
}

// Head sizes that are multiples of 16 (up to 256). Each chunk of K/V rows is gathered once and used
// by all the group's query heads; a head's 16 scores come out as one vector.
template <int HD>
BRISK_AVX512 void attend_avx512(const AttnShape& s, int kv_head, const float* q, int64_t n_keys,
                                const KvSpan* spans, size_t n_spans, float* out) {
  constexpr int V = HD / 16;
  const int gq = s.n_head / s.n_head_kv;
  thread_local std::vector<float> acc_buf;
  acc_buf.assign(static_cast<size_t>(gq) * HD, 0.0f);
  float m[64], l[64];
  for (int h = 0; h < gq; ++h) m[h] = -std::numeric_limits<float>::infinity(), l[h] = 0;
  const __m512 scale = _mm512_set1_ps(s.scale);
  ChunkRows c;
  size_t span = 0;
  for (int64_t p0 = 0; p0 < n_keys; p0 += kAttnChunk) {
    const int n = static_cast<int>(std::min<int64_t>(kAttnChunk, n_keys - p0));
    gather(s, static_cast<int64_t>(kv_head) * HD, spans, n_spans, span, p0, n, c);
    const __mmask16 live = static_cast<__mmask16>((1u << n) - 1);
    for (int h = 0; h < gq; ++h) {
      const float* qh = q + static_cast<int64_t>(kv_head * gq + h) * HD;
      __m512 qv[V];
      for (int d = 0; d < V; ++d) qv[d] = _mm512_loadu_ps(qh + 16 * d);
      __m512 part[16];
      for (int j = 0; j < 16; ++j) {
        part[j] = _mm512_setzero_ps();
        if (j < n)
          for (int d = 0; d < V; ++d)
            part[j] = _mm512_fmadd_ps(qv[d], _mm512_loadu_ps(c.k[j] + 16 * d), part[j]);
      }
      const __m512 scores =
          _mm512_mask_blend_ps(live, _mm512_set1_ps(-std::numeric_limits<float>::infinity()),
                               _mm512_mul_ps(reduce16x16(part), scale));
      const float mx = std::max(m[h], _mm512_reduce_max_ps(scores));
      const float corr = std::exp(m[h] - mx);  // exp(-inf) = 0 on the first chunk
      const __m512 pv = _mm512_maskz_mov_ps(live, exp16(_mm512_sub_ps(scores, _mm512_set1_ps(mx))));
      alignas(64) float p[kAttnChunk];
      _mm512_store_ps(p, pv);
      l[h] = l[h] * corr + _mm512_reduce_add_ps(pv);
      m[h] = mx;
      float* a = acc_buf.data() + static_cast<int64_t>(h) * HD;
      __m512 acc[V];
      const __m512 cv = _mm512_set1_ps(corr);
      for (int d = 0; d < V; ++d) acc[d] = _mm512_mul_ps(_mm512_loadu_ps(a + 16 * d), cv);
      for (int j = 0; j < n; ++j) {
        const __m512 pj = _mm512_set1_ps(p[j]);
        for (int d = 0; d < V; ++d)
          acc[d] = _mm512_fmadd_ps(pj, _mm512_loadu_ps(c.v[j] + 16 * d), acc[d]);
      }
      for (int d = 0; d < V; ++d) _mm512_storeu_ps(a + 16 * d, acc[d]);
    }
  }
  for (int h = 0; h < gq; ++h) {
    float* o = out + static_cast<int64_t>(kv_head * gq + h) * HD;
    const __m512 inv = _mm512_set1_ps(l[h] > 0 ? 1.0f / l[h] : 0.0f);
    const float* a = acc_buf.data() + static_cast<int64_t>(h) * HD;
    for (int d = 0; d < V; ++d)
      _mm512_storeu_ps(o + 16 * d, _mm512_mul_ps(_mm512_loadu_ps(a + 16 * d), inv));
  }
}
#endif

}  // namespace

void attention_group(const AttnShape& s, int kv_head, const float* q, int64_t n_keys,
                     const KvSpan* spans, size_t n_spans, float* out) {
#if defined(__x86_64__)
  if (best_isa() == Isa::Avx512) {
    switch (s.head_dim) {
      case 16:
        return attend_avx512<16>(s, kv_head, q, n_keys, spans, n_spans, out);
      case 32:
        return attend_avx512<32>(s, kv_head, q, n_keys, spans, n_spans, out);
      case 48:
        return attend_avx512<48>(s, kv_head, q, n_keys, spans, n_spans, out);
      case 64:
        return attend_avx512<64>(s, kv_head, q, n_keys, spans, n_spans, out);
      case 80:
        return attend_avx512<80>(s, kv_head, q, n_keys, spans, n_spans, out);
      case 96:
        return attend_avx512<96>(s, kv_head, q, n_keys, spans, n_spans, out);
      case 128:
        return attend_avx512<128>(s, kv_head, q, n_keys, spans, n_spans, out);
      case 256:
        return attend_avx512<256>(s, kv_head, q, n_keys, spans, n_spans, out);
      default:
        break;
    }
  }
#endif
  attend_generic(s, kv_head, q, n_keys, spans, n_spans, out);
}

}  // namespace brisk
