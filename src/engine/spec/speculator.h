// Speculative decoding beside the scheduler, as vLLM keeps spec_decode apart from it. The engine's
// step calls it at three points: before scheduling, to propose drafts for the sequences about to
// decode (prompt lookup proposes its tokens; a model drafter only the length, since the scheduler
// decides what runs); after scheduling, for a model drafter's round over the chunks that carry a
// draft; and with the verification pass's logits, to sample each drafted position as plain
// decoding would and keep the tokens up to the first miss. Verification is exact, so greedy
// output is the same token for token, and sampled output is distributed as without speculation.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/sequence.h"
#include "engine/spec/draft_policy.h"
#include "engine/spec/model_drafter.h"
#include "engine/spec/spec_config.h"

namespace brisk {

// What speculation has done so far (vLLM's spec_decode metrics).
struct SpecStats {
  int64_t drafts = 0, draft_tokens = 0, accepted_tokens = 0;  // verifications and their tokens
  std::vector<int64_t> accepted_per_pos;  // how often the draft's i-th token was accepted
};

class Speculator {
 public:
  // Checks c against the model; a draft model's KV (geometry draft_geom) lives in a cache of its
  // own over the target's block tables.
  Speculator(const Model& m, const SpecConfig& c, Forward& forward, KvCache& cache,
             ThreadPool& pool, const BlockManager& tables,
             const std::optional<KvGeometry>& draft_geom);
  ~Speculator();

  // The proposer a sequence uses: its request's choice, else the engine's.
  SpecMethod proposer(const Seq& s) const;
  // Before scheduling: fills each decoding sequence's draft (a model drafter's with placeholders
  // of the chosen length), as many tokens as the draft policy expects to pay; none past the model
  // length or the request's max_tokens.
  void propose(const std::vector<Seq*>& decoding, int64_t step, int64_t max_len);
  // After scheduling: the model drafter's round for the plan's chunks that carry its drafts.
  void draft(const StepPlan& plan);
  // Samples a decode chunk that carried n_draft drafted tokens, handing each kept token to `emit`
  // (which may finish the sequence; -1 when the sequence's constraint allows no token, and
  // false back when verification must stop after this token), and returns how many drafted
  // tokens were accepted.
  using EmitFn = std::function<bool(Seq&, int32_t, const float*)>;
  int64_t verify(Seq& s, int64_t n_draft, const float* logits, int64_t n_vocab, const EmitFn& emit);
  // A step ran: `tokens` in the batch, `seconds` in all (the proposers' own time is left out).
  void step_done(const StepPlan& plan, int64_t tokens, double seconds);

  // Copy-on-write of a block reaches the draft model's cache too.
  void copy_block(int32_t src, int32_t dst);
  uint64_t own_cache_bytes() const;
  double proposer_seconds() const { return proposer_seconds_; }  // in this step
  double drafter_seconds() const { return drafter_seconds_; }    // model drafters, in all
  const SpecStats& stats() const { return stats_; }

 private:
  const Model& model_;
  SpecConfig config_;
  std::unique_ptr<ModelDrafter> drafter_;  // layer skipping or a draft model
  bool own_draft_cache_ = false;
  std::vector<DraftTask> tasks_;
  DraftPolicy ngram_policy_, model_policy_;  // acceptance and costs differ by proposer
  double proposer_seconds_ = 0, drafter_seconds_ = 0;
  SpecStats stats_;
};

}  // namespace brisk
