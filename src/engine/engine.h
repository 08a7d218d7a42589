// The serving engine: requests in, streamed tokens and text out. Owns the paged KV cache, the
// scheduler and the model runner; each step() runs one ragged batch (decode tokens of running
// sequences plus prefill chunks of new ones) and delivers every new token through its request's
// callback. submit() and abort() may be called from any thread; step() from one thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/thread_pool.h"
#include "engine/limits.h"
#include "engine/request.h"
#include "engine/scheduler.h"
#include "engine/spec/spec_config.h"
#include "kv/block_manager.h"
#include "kv/paged_kv_cache.h"
#include "model/forward.h"
#include "model/model.h"

namespace brisk {

struct Req;
struct Seq;
class Speculator;
class GrammarCache;

struct EngineConfig {
  uint64_t kv_cache_bytes = 0;  // 0: enough for max_seqs full-length sequences, at most 2 GiB
  int block_size = 16;
  KvType kv_type = KvType::F16;
  bool prefix_caching = true;
  int64_t max_batched_tokens = 512;
  int max_seqs = 64;
  int64_t prefill_while_decoding = -1;  // see SchedulerConfig
  int64_t max_model_len = 0;            // 0: the model's training context (capped by the pool)
  SpecConfig spec;
  // Structured output: append the tokens a constraint forces without sampling them (not for
  // requests that ask for logprobs, which need each token's distribution).
  bool jump_forward = true;
};

// The KV pool's shape for this model and configuration, and the bytes that hold `tokens`
// positions of one sequence (whole blocks; with a draft model, in both caches).
KvGeometry kv_geometry_for(const Model& m, const EngineConfig& c);
uint64_t kv_bytes_for_tokens(const Model& m, const EngineConfig& c, int64_t tokens);

struct EngineStats {
  int64_t prompt_tokens = 0;         // prompt (and recomputed) tokens run through the model
  int64_t generated_tokens = 0;      // tokens sampled (or forced by a constraint)
  int64_t forced_tokens = 0;         // of those, appended by jump-forward
  int64_t constraints_compiled = 0;  // constraints compiled (a lookup that finds one compiled: 0)
  int64_t steps = 0;
  int64_t preemptions = 0;
  int64_t cache_queries = 0, cache_hits = 0;  // prefix cache, in tokens
  int32_t blocks_total = 0, blocks_in_use = 0, blocks_cached = 0, peak_blocks_in_use = 0;
  size_t running = 0, waiting = 0, peak_running = 0;
  double forward_seconds = 0;
  // A model split over ranks: how many, and rank 0's time in their collectives (inside
  // forward_seconds, waiting for the slowest rank included).
  int ranks = 1;
  double collective_seconds = 0;
  // Speculative decoding: verification passes, tokens proposed and accepted, and how often the
  // draft's i-th token was accepted (vLLM's spec_decode metrics).
  int64_t spec_drafts = 0, spec_draft_tokens = 0, spec_accepted_tokens = 0;
  std::vector<int64_t> spec_accepted_per_pos;
};

class Engine {
 public:
  Engine(const Model& m, ThreadPool& pool, const EngineConfig& c);
  ~Engine();

  // Queues a request; its callback runs on the step() thread. Throws (and queues nothing) for a
  // request that breaks a limit (a RequestError, see check) or whose constraint does not compile.
  RequestId submit(Request r, OutputFn on_output);
  // Compiles a constraint (throws the Error submit would), or finds it among the most recently
  // used; a request that carries the result (Request::compiled_constraint) is not compiled
  // again. Safe on any thread: a server compiles off its I/O thread.
  std::shared_ptr<const grammar::CompiledGrammar> compile(const grammar::Constraint& c);
  // Ends a request wherever it is (its blocks are freed); its callback gets a final Abort event.
  void abort(RequestId id);

  // Runs one batch. Returns false when there was nothing to do.
  bool step();
  void run_until_idle();
  bool idle() const;
  // Blocks until submit() or abort() is called (or the timeout passes): for a thread that runs
  // step() whenever there is work.
  void wait_for_work(double timeout_seconds);

  // Forgets every cached prefix (blocks still in use keep their content). step() thread only.
  void clear_prefix_cache();

  EngineStats stats() const;
  const KvGeometry& kv_geometry() const { return geom_; }
  int32_t n_blocks() const { return n_blocks_; }
  int64_t capacity_tokens() const { return static_cast<int64_t>(n_blocks_) * geom_.block_size; }
  uint64_t kv_bytes() const;  // both caches' with a draft model
  const KvGeometry* draft_kv_geometry() const { return draft_geom_ ? &*draft_geom_ : nullptr; }
  int64_t max_model_len() const { return max_len_; }
  RequestBounds bounds() const { return {model_.hp.n_vocab, max_len_}; }
  // What submit checks first (limits.h's check_request, and the proposer asked for): throws
  // RequestError naming the field.
  void check(const Request& r) const;
  const EngineConfig& config() const { return config_; }
  int threads() const { return pool_.size(); }
  const Model& model() const { return model_; }
  // Throws unless block accounting is exact (free + in use + cached = total, ref counts match).
  void check() const;

 private:
  void take_inbox();
  Seq& add_seq(Req& req, int index, const SamplingParams& sp, const std::vector<int32_t>& tokens);
  void fork_children(Seq& parent, const float* logits);
  std::vector<Seq*> decoding_seqs();
  const float* run(const StepPlan& plan);
  void process_outputs(const StepPlan& plan, const float* logits);
  void sample_and_emit(Seq& s, const float* logits);
  void emit_token(Seq& s, int32_t tok, const float* logits);
  void finish(Seq& s, FinishReason r, std::string text, int32_t tok);
  void finish_flushed(Seq& s, int32_t tok);
  bool jumps_forward(const Seq& s) const;
  void jump_forward(Seq& s);
  Output output(const Seq& s, int32_t tok, std::string text, FinishReason r) const;

  const Model& model_;
  ThreadPool& pool_;
  EngineConfig config_;
  KvGeometry geom_;
  int32_t n_blocks_;
  int64_t max_len_;
  std::optional<KvGeometry> draft_geom_;
  std::unique_ptr<BlockManager> blocks_;
  std::unique_ptr<PagedKvCache> cache_;
  std::unique_ptr<Scheduler> sched_;
  Forward forward_;
  Batch batch_;
  std::unique_ptr<Speculator> spec_;
  std::unique_ptr<GrammarCache> grammars_;

  std::unordered_map<RequestId, std::unique_ptr<Req>> reqs_;
  std::vector<int32_t> free_ids_;
  int32_t next_seq_id_ = 0;
  int64_t generated_ = 0, prompt_tokens_ = 0, steps_ = 0, forced_ = 0;
  size_t peak_running_ = 0;
  double forward_seconds_ = 0;

  mutable std::mutex inbox_mu_;
  std::condition_variable inbox_cv_;
  std::vector<std::unique_ptr<Req>> inbox_;
  std::vector<RequestId> aborts_;
  std::atomic<RequestId> next_id_{1};
};

}  // namespace brisk
