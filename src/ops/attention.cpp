#include "ops/attention.h"

#include <cmath>
#include <limits>
#include <vector>

namespace brisk {
namespace {

inline float dot(const float* a, const float* b, int n) {
  float part[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) part[l] += a[i + l] * b[i + l];
  for (; i < n; ++i) part[0] += a[i] * b[i];
  return ((part[0] + part[4]) + (part[2] + part[6])) + ((part[1] + part[5]) + (part[3] + part[7]));
}

}  // namespace

void attention_group(const AttnShape& s, int kv_head, const float* q, int64_t n_keys, const KvSpan* spans,
                     size_t n_spans, float* out) {
  const int gq = s.n_head / s.n_head_kv;
  const int hd = s.head_dim;
  const int64_t koff = static_cast<int64_t>(kv_head) * hd;
  thread_local std::vector<float> acc;
  acc.assign(static_cast<size_t>(gq) * hd, 0.0f);
  float m[64], l[64];  // per query head of the group; GQA groups are at most 64 heads (checked by callers)
  for (int h = 0; h < gq; ++h) {
    m[h] = -std::numeric_limits<float>::infinity();
    l[h] = 0;
  }
  const float* kp[kAttnChunk];
  const float* vp[kAttnChunk];
  size_t span = 0;
  for (int64_t p0 = 0; p0 < n_keys; p0 += kAttnChunk) {
    const int n = static_cast<int>(n_keys - p0 < kAttnChunk ? n_keys - p0 : kAttnChunk);
    for (int j = 0; j < n; ++j) {
      const int64_t pos = p0 + j;
      while (span < n_spans && pos >= spans[span].pos0 + spans[span].n) ++span;
      const KvSpan& sp = spans[span];
      const int64_t off = (pos - sp.pos0) * s.kv_stride + koff;
      kp[j] = sp.k + off;
      vp[j] = sp.v + off;
    }
    for (int h = 0; h < gq; ++h) {
      const float* qh = q + static_cast<int64_t>(kv_head * gq + h) * hd;
      float sc[kAttnChunk];
      float mx = m[h];
      for (int j = 0; j < n; ++j) {
        sc[j] = dot(qh, kp[j], hd) * s.scale;
        mx = sc[j] > mx ? sc[j] : mx;
      }
      const float corr = std::exp(m[h] - mx);  // exp(-inf) = 0 on the first chunk
      float* a = acc.data() + static_cast<int64_t>(h) * hd;
      float sum = l[h] * corr;
      for (int d = 0; d < hd; ++d) a[d] *= corr;
      for (int j = 0; j < n; ++j) {
        const float pj = std::exp(sc[j] - mx);
        sum += pj;
        const float* v = vp[j];
        for (int d = 0; d < hd; ++d) a[d] += pj * v[d];
      }
      l[h] = sum;
      m[h] = mx;
    }
  }
  for (int h = 0; h < gq; ++h) {
    float* o = out + static_cast<int64_t>(kv_head * gq + h) * hd;
    const float inv = l[h] > 0 ? 1.0f / l[h] : 0.0f;
    const float* a = acc.data() + static_cast<int64_t>(h) * hd;
    for (int d = 0; d < hd; ++d) o[d] = a[d] * inv;
  }
}

}  // namespace brisk
