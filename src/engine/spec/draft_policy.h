// How many tokens a sequence drafts in a step: the number that maximizes its expected tokens per
// second. A draft of g tokens yields 1 + a1 + a1 a2 + ... + a1..ag tokens per verification, where
// ai is the chance that draft token i is accepted once the ones before it were (this sequence's
// recent rate, drawn towards the engine's); it costs the step's growth from b to b(1 + g) tokens
// (b sequences decoding, each drafting alike) and b g drafted tokens, against the plain step of b
// tokens. The costs are measured as the engine runs: the forward time of decode steps as a line in
// their size (fitted to the recent steps, whose sizes vary with the drafts), and the proposer's
// time per drafted token. So a draft shrinks when guesses are poor or drafting is dear, and
// speculation switches itself off where it would not beat plain decoding: for good in large
// compute-bound batches, whose extra tokens cost as much as the others (until the batch shrinks),
// and for poor guesses with a probe of one token now and then, backing off while probes keep
// failing, and only while a probe costs little beside the time since the last one (a draft model
// must first compute the KV of every token it has not seen).
#pragma once

#include <array>
#include <cstdint>

namespace brisk {

// y against x by exponentially weighted least squares, the slope drawn towards a prior while the
// recent x vary too little.
class LineFit {
 public:
  explicit LineFit(double decay) : decay_(decay) {}
  void add(double x, double y);
  bool empty() const { return w_ <= 0; }
  double mean_x() const { return wx_ / w_; }
  double mean_y() const { return wy_ / w_; }
  double variance_x() const;
  double slope(double prior) const;  // >= 0
  double raw_slope() const;          // the least-squares slope alone (x must vary)
  double at(double x, double prior_slope) const;

 private:
  double decay_, w_ = 0, wx_ = 0, wxx_ = 0, wy_ = 0, wxy_ = 0;
};

class DraftPolicy {
 public:
  static constexpr int kPositions = 16;  // acceptance is tracked for this many draft positions
  struct Seq {
    // Recent drafts (decaying counts): those that reached position i, and those accepted there.
    std::array<double, kPositions> tried{}, accepted{};
    int64_t rounds = 0;
    int64_t next_probe = 0;  // the step from which a switched-off sequence may probe
    int probe_wait = 8;
  };
  DraftPolicy();

  // The draft length for s this step (0: none), at most max, with n_decoding sequences decoding;
  // lag: tokens the proposer would first have to catch up with (a draft model's KV).
  int choose(Seq& s, int max, int64_t n_decoding, int64_t step, int64_t lag = 0) const;
  // A verification of `drafted` tokens kept the first `accepted`.
  void verified(Seq& s, int drafted, int accepted);
  // A step that only decoded computed `tokens` tokens in `seconds`.
  void decode_step(int64_t tokens, double seconds);
  // A step that computed prompt tokens too (its attention costs more per token than a decode
  // step's: it only informs the prior while decode steps vary too little in size).
  void prompt_step(int64_t tokens, double seconds);
  // The proposer took `seconds` to draft `tokens` tokens.
  void drafted(int64_t tokens, double seconds);
  // Before the proposer is timed, a drafted token is taken to cost this share of a one-token step
  // (a model drafter: its weights' share of the target's).
  void set_draft_cost_prior(double share_of_step) { draft_prior_ = share_of_step; }
  // A draft model's first pass of a round computed `rows` positions (its catch-up and the first
  // draft position of each sequence) in `seconds`.
  void first_pass(int64_t rows, double seconds);

  // The model's view, for statistics and tests: the forward time of a decode step of `tokens`
  // tokens, the proposer's time per token, and the speedup a draft of g tokens is expected to give
  // a sequence whose every draft token is accepted with chance a, among n decoding.
  double step_seconds(int64_t tokens) const;
  double draft_seconds_per_token() const { return draft_per_token_; }
  double expected_speedup(int g, double a, int64_t n) const;

 private:
  double speedup(int g, const double* accept, int64_t n) const;
  double accept_rate(const Seq& s, int i) const;
  double catch_up_seconds(int64_t lag) const;

  LineFit steps_;                                  // decode steps: forward seconds against tokens
  double measured_slope_ = 0, measured_at_ = 0;    // the last slope fitted with spread, and where
  double prompt_tokens_ = 0, prompt_seconds_ = 0;  // the last step with prompt tokens
  LineFit first_passes_;  // a draft model's first passes: seconds against rows
  double draft_per_token_ = 0, draft_prior_ = 0;
  bool draft_seen_ = false;
  double draft_cost() const;
  // Every sequence's drafts: the prior of a sequence that has drafted little.
  std::array<double, kPositions> pool_tried_{}, pool_accepted_{};
};

}  // namespace brisk
