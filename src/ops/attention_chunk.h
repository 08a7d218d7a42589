// What the attention kernels of every tier share: a chunk's K/V row addresses, gathered from the
// spans, and the per-tier kernel tables. Internal to ops/attention*.cpp.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "ops/attention.h"

namespace brisk::attention_detail {

// Gathers the K/V row pointers (and, for Q8, scales) of positions [p0, p0 + n) of one KV head.
struct ChunkRows {
  const void* k[kAttnChunk];
  const void* v[kAttnChunk];
  float ks[kAttnChunk];
  float vs[kAttnChunk];
};

template <KvType T>
inline void gather(const AttnShape& s, int kv_head, const KvSpan* spans, size_t n_spans,
                   size_t& span, int64_t p0, int n, ChunkRows& c) {
  constexpr size_t eb = T == KvType::F32 ? 4 : T == KvType::Q8 ? 1 : 2;
  const int64_t koff = static_cast<int64_t>(kv_head) * s.head_dim;
  while (span + 1 < n_spans && p0 >= spans[span].pos0 + spans[span].n) ++span;
  if (const KvSpan& sp = spans[span]; p0 + n <= sp.pos0 + sp.n) {
    // The whole chunk lies in one span (always so when blocks hold a multiple of 16 positions).
    const int64_t r0 = p0 - sp.pos0;
    const size_t off = static_cast<size_t>(r0 * s.kv_stride + koff) * eb;
    const size_t step = static_cast<size_t>(s.kv_stride) * eb;
    for (int j = 0; j < n; ++j) {
      c.k[j] = static_cast<const char*>(sp.k) + off + j * step;
      c.v[j] = static_cast<const char*>(sp.v) + off + j * step;
    }
    if constexpr (T == KvType::Q8)
      for (int j = 0; j < n; ++j) {
        const int64_t si = (r0 + j) * s.n_head_kv + kv_head;
        c.ks[j] = sp.k_scale[si];
        c.vs[j] = sp.v_scale[si];
      }
    return;
  }
  for (int j = 0; j < n; ++j) {
    const int64_t pos = p0 + j;
    while (span + 1 < n_spans && pos >= spans[span].pos0 + spans[span].n) ++span;
    const KvSpan& sp = spans[span];
    const size_t off = static_cast<size_t>((pos - sp.pos0) * s.kv_stride + koff) * eb;
    c.k[j] = static_cast<const char*>(sp.k) + off;
    c.v[j] = static_cast<const char*>(sp.v) + off;
    if constexpr (T == KvType::Q8) {
      const int64_t si = (pos - sp.pos0) * s.n_head_kv + kv_head;
      c.ks[j] = sp.k_scale[si];
      c.vs[j] = sp.v_scale[si];
    }
  }
}

// The first chunk any of the queries reads: chunks stay aligned to absolute positions, so a
// query's keys fall in the same chunks (and lanes) whichever queries come with it.
inline int64_t first_chunk(const AttnQuery* qs, int nq) {
  int64_t p = nq > 0 ? qs[0].first_key : 0;
  for (int i = 1; i < nq; ++i) p = qs[i].first_key < p ? qs[i].first_key : p;
  return p / kAttnChunk * kAttnChunk;
}

// Whether query q reads any key of the chunk at p0, and how many of its leading keys it skips.
inline bool reads_chunk(const AttnQuery& q, int64_t p0) {
  return q.n_keys > p0 && q.first_key < p0 + kAttnChunk;
}
inline int skipped_keys(const AttnQuery& q, int64_t p0) {
  return q.first_key > p0 ? static_cast<int>(q.first_key - p0) : 0;
}

// What a head's accumulated output is multiplied by at the end: 1 / (its softmax sum l), and
// with a sink logit s, e^(m-M) / (l e^(m-M) + e^(s-M)) where m is the running maximum and
// M = max(m, s) (the sink joins the denominator only).
inline float output_scale(float m, float l, const float* sinks, int head) {
  if (!sinks) return l > 0 ? 1.0f / l : 0.0f;
  const float s = sinks[head];
  const float mm = m > s ? m : s;
  const float c = std::exp(m - mm);
  return c / (l * c + std::exp(s - mm));
}

// A tier's kernel for one KV type and head size: all the queries of one sequence and KV head.
using AttendFn = void (*)(const AttnShape&, int kv_head, const AttnQuery*, int n_queries,
                          const KvSpan*, size_t n_spans);
// nullptr where the tier has no kernel for the head size (the portable kernel takes it).
AttendFn attend_avx512(KvType t, int head_dim);
AttendFn attend_avx2(KvType t, int head_dim);

// A SIMD tier's table: K<HD, Load>::fn for the head sizes the tiers build (multiples of 8 up to
// 256, those of the models in use; one list, so the tiers cover the same sizes), Load the tier's
// loader of the KV type; nullptr for any other head size.
using KernelHeadDims = std::integer_sequence<int, 8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 256>;
template <template <int, class> class K, class Load, int... HD>
AttendFn pick_head_dim(int head_dim, std::integer_sequence<int, HD...>) {
  AttendFn f = nullptr;
  ((head_dim == HD ? (f = K<HD, Load>::fn, true) : false) || ...);
  return f;
}
template <template <int, class> class K, class F32, class F16, class BF16, class Q8>
AttendFn pick_kernel(KvType t, int head_dim) {
  switch (t) {
    case KvType::F32:
      return pick_head_dim<K, F32>(head_dim, KernelHeadDims{});
    case KvType::F16:
      return pick_head_dim<K, F16>(head_dim, KernelHeadDims{});
    case KvType::BF16:
      return pick_head_dim<K, BF16>(head_dim, KernelHeadDims{});
    case KvType::Q8:
      return pick_head_dim<K, Q8>(head_dim, KernelHeadDims{});
  }
  return nullptr;
}

}  // namespace brisk::attention_detail
