// Perplexity as llama-perplexity computes it: the text's tokens cut into non-overlapping windows of
// n_ctx tokens (each starting with BOS when the vocabulary adds one), every window evaluated from
// an empty cache, and only the second half of each window scored (each of those tokens then has
// at least n_ctx/2 tokens of context).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/thread_pool.h"
#include "model/model.h"

namespace brisk {

struct PerplexityResult {
  double ppl = 0, ppl_error = 0;  // exp(mean NLL) and its standard error
  double mean_nll = 0;
  int64_t chunks = 0, scored = 0;
};

// on_chunk(chunk_index, n_chunks, running estimate) after each window.
PerplexityResult perplexity(const Model& m, ThreadPool& pool, const std::vector<int32_t>& tokens,
                            int64_t n_ctx, int64_t n_batch, int64_t max_chunks = -1,
                            const std::function<void(int64_t, int64_t, double)>& on_chunk = {});

}  // namespace brisk
