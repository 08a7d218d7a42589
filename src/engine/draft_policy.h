// How many tokens a sequence drafts in a step: the number that maximizes its expected tokens per
// second. A draft of g tokens yields 1 + a1 + a1 a2 + ... + a1..ag tokens per verification, where
// ai is the chance that draft token i is accepted once the ones before it were (this sequence's
// recent rate, drawn towards the engine's); it costs the step's growth from b to b(1 + g) tokens
// (b sequences decoding, each drafting alike) and b g drafted tokens, against the plain step of b
// tokens. Both costs are measured as the engine runs: the forward time of decode steps as a line
// in their size (fitted to the recent steps, whose sizes vary with the drafts), and the proposer's
// time per drafted token. So a draft shrinks when guesses are poor or drafting is dear, and
// speculation switches itself off where it would not beat plain decoding: for good in large
// compute-bound batches, whose extra tokens cost as much as the others (until the batch shrinks),
// and for poor guesses with a probe of one token now and then, backing off while probes keep
// failing.
#pragma once

#include <array>
#include <cstdint>

namespace brisk {

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

  // The draft length for s this step (0: none), at most max, with n_decoding sequences decoding.
  int choose(Seq& s, int max, int64_t n_decoding, int64_t step) const;
  // A verification of `drafted` tokens kept the first `accepted`.
  void verified(Seq& s, int drafted, int accepted);
  // A step that only decoded: its forward pass computed `tokens` tokens in `seconds`.
  void decode_step(int64_t tokens, double seconds);
  // The proposer took `seconds` to draft `tokens` tokens.
  void drafted(int64_t tokens, double seconds);

  // The model's view, for statistics and tests: the forward time of a decode step of `tokens`
  // tokens, the proposer's time per token, and the speedup a draft of g tokens is expected to give
  // a sequence whose every draft token is accepted with chance a, among n decoding.
  double step_seconds(int64_t tokens) const;
  double draft_seconds_per_token() const { return draft_per_token_; }
  double expected_speedup(int g, double a, int64_t n) const;

 private:
  double speedup(int g, const double* accept, int64_t n) const;
  double accept_rate(const Seq& s, int i) const;

  // Exponentially weighted least squares of decode steps' forward seconds against their tokens.
  double w_ = 0, wn_ = 0, wnn_ = 0, wt_ = 0, wnt_ = 0;
  double draft_per_token_ = 0;
  bool draft_seen_ = false;
  // Every sequence's drafts: the prior of a sequence that has drafted little.
  std::array<double, kPositions> pool_tried_{}, pool_accepted_{};
};

}  // namespace brisk
