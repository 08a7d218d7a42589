// Proposers that are language models: a separate draft model, whose KV lives in a second paged
// cache over the target's block tables (so allocation, copy-on-write, preemption and rollback
// apply to both at once), or the target's own first layers (layer skipping, over the target's
// cache). A round drafts for all the sequences given a draft in the step together, one position
// at a time; each token is drawn by the sequence's draft sampler (the target's settings, its own
// random stream; the argmax when greedy) and its distribution kept for verification.
//
// A draft model computes a sequence's KV only when the sequence drafts: first what it lacks of
// the verified tokens, then the drafting positions. Nothing is spent on sequences that do not
// speculate (a large batch, poor guesses). Full blocks whose draft rows are complete are marked,
// by the block's generation, so a sequence that takes them from the prefix cache (or shares them
// with a fork) need not compute them again; rows of a shared block that another sequence in the
// round computes are left to it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_set>
#include <vector>

#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "engine/structured_output.h"
#include "kv/paged_kv_cache.h"
#include "model/forward.h"

namespace brisk {

// One sequence's part in a round: seq->draft.size() tokens are drafted after seq->tokens (whose
// last token the target has not computed yet).
struct DraftTask {
  SchedSeq* seq;
  Sampler* sampler;              // the draft's, following the target's sampler
  std::vector<Distribution>* q;  // out: each draft token's distribution
  int64_t* n_draft_computed;     // a draft model's: the leading positions its cache holds for
                                 // the sequence (-1: not known yet); updated
  SeqGrammar* matcher;           // the sequence's (null: none): drafts only what it allows
  size_t n_taken = 0;            // draft tokens the constraint took this round (undone after)
};

class ModelDrafter {
 public:
  // Layer skipping: the target's first n_layers blocks, writing KV into the target's cache where
  // the verification pass rewrites it before reading any.
  ModelDrafter(Forward& target, KvCache& target_cache, int n_layers, int64_t n_vocab);
  // A draft model with its own cache of geometry g over the target's block tables. n_vocab: the
  // ids it may propose (those both vocabularies hold).
  ModelDrafter(const Model& draft, int64_t n_vocab, ThreadPool& pool, const KvGeometry& g,
               const BlockManager& tables);

  void run(std::span<DraftTask> tasks);
  // The draft model's own cache (null for layer skipping): its blocks are copied with the
  // target's on copy-on-write.
  PagedKvCache* own_cache() { return own_cache_.get(); }
  const PagedKvCache* own_cache() const { return own_cache_.get(); }
  double seconds() const { return seconds_; }
  // The last round's first pass: its rows (catch-up and first draft positions) and seconds.
  int64_t first_pass_rows() const { return first_rows_; }
  double first_pass_seconds() const { return first_seconds_; }

 private:
  int32_t draft_token(int32_t t) const;
  int32_t propose(DraftTask& t, size_t j, const float* logits);
  bool marked(BlockId b) const;
  void catch_up(const DraftTask& t);
  void mark(const DraftTask& t);

  std::unique_ptr<Forward> own_forward_;
  std::unique_ptr<PagedKvCache> own_cache_;
  const BlockManager* tables_ = nullptr;  // a draft model's
  Forward& forward_;
  KvCache& cache_;
  int n_layers_;
  int64_t n_vocab_, row_stride_, embed_vocab_;
  Batch batch_;
  // A draft model's: per block, 1 + the generation whose rows are all in its cache (0: none).
  std::vector<uint64_t> marks_;
  std::unordered_set<int64_t> claimed_;  // rows of shared blocks computed in this round
  double seconds_ = 0, first_seconds_ = 0;
  int64_t first_rows_ = 0;
};

}  // namespace brisk
