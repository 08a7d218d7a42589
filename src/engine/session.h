// One conversation with a model: a single sequence whose tokens stay in a contiguous KV cache, so
// later turns only process their new tokens. Used by `brisk run` and `brisk chat`.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "engine/sampler.h"
#include "kv/kv_cache.h"
#include "model/forward.h"

namespace brisk {

struct GenerateStats {
  int64_t prompt_tokens = 0, generated_tokens = 0;
  double prompt_seconds = 0, generate_seconds = 0;
};

class Session {
 public:
  Session(const Model& m, ThreadPool& pool, int64_t n_ctx, int64_t n_batch = 512);

  // Processes tokens after those already in the cache; returns the logits of the last one.
  const float* feed(const std::vector<int32_t>& tokens);
  // Takes the whole conversation so far, keeps the cached part it shares with what was processed
  // before, and processes only the rest.
  const float* feed_conversation(const std::vector<int32_t>& all);

  // Samples up to n_predict tokens (-1: until the context is full) from the last logits, calling
  // on_token for each; stops on end-of-generation (unless ignore_eos), when on_token returns false
  // or when *stop becomes true.
  void generate(Sampler& sampler, int64_t n_predict, bool ignore_eos,
                const std::function<bool(int32_t)>& on_token,
                const std::atomic<bool>* stop = nullptr);

  const std::vector<int32_t>& tokens() const { return tokens_; }
  int64_t n_ctx() const { return n_ctx_; }
  GenerateStats& stats() { return stats_; }
  // Drops cached tokens from position n on (for a chat turn that rewrites history).
  void truncate(int64_t n);

 private:
  const Model& m_;
  int64_t n_ctx_, n_batch_;
  ContiguousKvCache cache_;
  Forward forward_;
  std::vector<int32_t> tokens_;
  const float* last_logits_ = nullptr;
  GenerateStats stats_;
  Batch batch_;
};

}  // namespace brisk
