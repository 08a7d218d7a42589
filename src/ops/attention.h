// FlashAttention: keys are visited in chunks of 16 positions with an online softmax (running max,
// running sum, rescaled accumulator), so no score row is ever stored. The kernel reads K/V rows
// through spans, so a contiguous cache and a paged one (one span per block) share it; chunks are
// aligned to absolute positions, so results do not depend on the span layout. K/V elements are read
// in the cache's own type (f32, f16, bf16, or int8 with a scale per position and KV head) and
// widened once per chunk for all the queries that use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/kv_types.h"
#include "ops/cpu.h"

namespace brisk {

struct AttnShape {
  int n_head, n_head_kv, head_dim;
  int64_t kv_stride;  // elements between consecutive positions' rows
  float scale;        // usually 1/sqrt(head_dim)
  KvType kv_type = KvType::F32;
  // Attention sinks (gpt-oss): one learned logit per query head (n_head of them, head h's at
  // sinks[h]) that joins each softmax's denominator and adds nothing to the output; null: none.
  const float* sinks = nullptr;
  // Logit soft-capping (Gemma 2): each scaled score s becomes softcap * tanh(s / softcap) before
  // the softmax; 0: none.
  float softcap = 0.0f;
};

inline constexpr int kAttnChunk = 16;

// One token's query: its full q row (n_head * head_dim floats), where its full output row goes,
// and the positions it attends to, [first_key, n_keys) (first_key > 0: a sliding window).
struct AttnQuery {
  const float* q;
  float* out;
  int64_t n_keys;
  int64_t first_key = 0;
};

// Computes, for tokens of one sequence (they share `spans`), the output of the query heads that
// share KV head `kv_head` (GQA: n_head / n_head_kv of them). Each K/V chunk is read once for all
// the queries; a token's result is the same bits whichever other queries come with it.
void attention_group(const AttnShape& s, int kv_head, const AttnQuery* queries, int n_queries,
                     const KvSpan* spans, size_t n_spans);

// The same with the kernels of one instruction set the CPU has (tests compare them); the call
// above uses the best one.
void attention_group_isa(Isa isa, const AttnShape& s, int kv_head, const AttnQuery* queries,
                         int n_queries, const KvSpan* spans, size_t n_spans);

// One token.
inline void attention_group(const AttnShape& s, int kv_head, const float* q, int64_t n_keys,
                            const KvSpan* spans, size_t n_spans, float* out) {
  const AttnQuery one{q, out, n_keys};
  attention_group(s, kv_head, &one, 1, spans, n_spans);
}

}  // namespace brisk
