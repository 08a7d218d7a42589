// FlashAttention for one query token: keys are visited in chunks of 16 positions with an online
// softmax (running max, running sum, rescaled accumulator), so no score row is ever stored. The
// kernel reads K/V rows through spans, so a contiguous cache and a paged one (one span per block)
// share it; chunks are aligned to absolute positions, so results do not depend on the span layout.
#pragma once

#include <cstddef>
#include <cstdint>

namespace brisk {

// K and V rows of positions [pos0, pos0 + n), `stride` floats apart; each row holds all KV heads.
struct KvSpan {
  const float* k;
  const float* v;
  int64_t pos0;
  int64_t n;
};

struct AttnShape {
  int n_head, n_head_kv, head_dim;
  int64_t kv_stride;  // floats between consecutive positions' rows
  float scale;        // usually 1/sqrt(head_dim)
};

inline constexpr int kAttnChunk = 16;

// Computes the output of the query heads that share KV head `kv_head` (GQA: n_head / n_head_kv of
// them, each K/V chunk read once for all of them), attending to positions [0, n_keys).
// q and out are the token's full rows (n_head * head_dim floats).
void attention_group(const AttnShape& s, int kv_head, const float* q, int64_t n_keys,
                     const KvSpan* spans, size_t n_spans, float* out);

}  // namespace brisk
