// Continuous batching: which tokens of which sequences the next forward pass computes.
//
// Every step builds one ragged batch under a token budget and a sequence limit: first a decode
// token for each running sequence that has one to compute (admission order), then the next chunk of
// each prompt still being prefilled, then waiting sequences in arrival order, each starting with
// whatever its prompt has in the prefix cache and a chunk of the rest. While sequences decode,
// prompt tokens per step are capped (SchedulerConfig::prefill_while_decoding) so that a step
// carrying a new prompt takes about as long as a few decode steps: streams keep flowing. When the
// block pool runs dry the most recently admitted sequence is preempted: its blocks are freed and it
// waits to be recomputed. No tensors here: the scheduler sees token ids, counts and block tables.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "kv/block_manager.h"

namespace brisk {

// What the scheduler knows of a sequence.
struct SchedSeq {
  int32_t id = -1;              // its block table in the BlockManager
  std::vector<int32_t> tokens;  // prompt and generated tokens so far
  int64_t n_computed = 0;       // leading tokens whose KV is stored
  int64_t n_preempted = 0;      // times it lost its blocks
  int64_t n_cached = -1;        // prompt tokens found in the prefix cache on first admission
  // Tokens a proposer guessed to follow `tokens`: a decode step computes them after the last token
  // (as far as the token budget and the pool allow) so that they can be verified in one pass.
  std::vector<int32_t> draft;
};

struct SchedulerConfig {
  int64_t max_batched_tokens = 512;
  int max_seqs = 64;
  // Prompt tokens one step may compute while other sequences decode: -1 = as many as that step's
  // decode tokens, at least kMinPrefillWhileDecoding; 0 = no cap beyond max_batched_tokens.
  int64_t prefill_while_decoding = -1;
};
constexpr int64_t kMinPrefillWhileDecoding = 32;

struct ScheduledChunk {
  SchedSeq* seq;
  int64_t start, count;  // tokens [start, start + count) are computed
  bool logits;           // the chunk ends at the sequence's last token: sample from it
  int64_t n_draft = 0;   // of count, the trailing draft tokens (decode chunks only)
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  std::vector<BlockCopy> copies;     // copy-on-write, to perform before the forward pass
  std::vector<SchedSeq*> preempted;  // moved back to waiting this step
  int64_t n_tokens() const;
};

class Scheduler {
 public:
  Scheduler(const SchedulerConfig& c, BlockManager& bm);

  void add(SchedSeq* s);  // waits for admission, after those already waiting
  // A sequence forked from `parent` (BlockManager::fork done): it runs right away, next to it.
  void add_forked(SchedSeq* child, const SchedSeq* parent);
  // Drops a finished or aborted sequence, freeing its blocks.
  void remove(SchedSeq* s);

  StepPlan schedule();
  // The plan's chunks were computed: advances n_computed (up to the last token before any draft)
  // and publishes full blocks.
  void computed(const StepPlan& plan);
  // The first `accepted` draft tokens of s's decode chunk were verified (and are now in s->tokens):
  // their KV counts as computed; the positions of the rejected rest go back to the pool.
  void accept_draft(SchedSeq* s, int64_t accepted);

  bool idle() const { return waiting_.empty() && running_.empty(); }
  size_t n_waiting() const { return waiting_.size(); }
  size_t n_running() const { return running_.size(); }
  int64_t n_preemptions() const { return n_preemptions_; }

 private:
  void preempt(SchedSeq* s, StepPlan& plan);

  SchedulerConfig config_;
  BlockManager& blocks_;
  std::deque<SchedSeq*> waiting_;
  std::vector<SchedSeq*> running_;  // admission order
  int64_t n_preemptions_ = 0;
};

}  // namespace brisk
