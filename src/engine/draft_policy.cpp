#include "engine/draft_policy.h"

#include <algorithm>
#include <cmath>

namespace brisk {

namespace {
// Recent history weighs most: a sequence's counts decay per verification, the engine's pooled
// counts more slowly, a step size's time per step of that size.
constexpr double kSeqDecay = 0.95, kPoolDecay = 0.995, kFitDecay = 0.97;
constexpr double kPriorWeight = 2;  // drafts the pooled rate counts as in a sequence's estimate
constexpr double kMinGain = 1.02;   // a draft must promise at least this speedup
constexpr double kOptimism = 0.5;
constexpr int kMaxProbeWait = 64;
// Spread in the step sizes the fit needs before its slope is trusted over the prior, in tokens^2.
constexpr double kPriorVariance = 0.25;
}  // namespace

// Seconds of a decode step of n tokens: the fitted line, its slope drawn towards a prior while
// the steps seen vary too little in size. The prior: a step of n tokens costs t(1 + n/8) / (1 +
// n̄/8), the first tokens riding on the weight reads almost free and a large batch paying its
// average per token.
double DraftPolicy::step_seconds(int64_t tokens) const {
  if (w_ <= 0) return 0;
  const double mn = wn_ / w_, mt = wt_ / w_;
  const double var = std::max(0.0, wnn_ / w_ - mn * mn);
  const double cov = wnt_ / w_ - mn * mt;
  const double prior = mt / (mn + 8);
  const double slope = std::max(0.0, (cov + kPriorVariance * prior) / (var + kPriorVariance));
  return std::max(mt + slope * (static_cast<double>(tokens) - mn), 1e-9);
}

// A position's rate is drawn towards the one before it where it has been tried little (drafts
// longer than any tried so far are judged by the last position measured, not by a coin), and a
// sequence's towards the engine's.
double DraftPolicy::accept_rate(const Seq& s, int i) const {
  i = std::min(i, kPositions - 1);
  double pool = 0.5, own = 0.5;
  for (int j = 0; j <= i; ++j) {  // (a few positions: cheap enough per call)
    pool = (pool_accepted_[j] + kPriorWeight * pool) / (pool_tried_[j] + kPriorWeight);
    own = (s.accepted[j] + kPriorWeight * pool) / (s.tried[j] + kPriorWeight);
  }
  // Optimism where little is known (an upper confidence bound): a position rarely reached keeps
  // being tried until its rate is measured, instead of a poor first guess ruling it out.
  return std::min(1.0, own + kOptimism / std::sqrt(1 + s.tried[i] + pool_tried_[i]));
}

double DraftPolicy::speedup(int g, const double* accept, int64_t n) const {
  const double plain = step_seconds(n);
  if (g <= 0 || plain <= 0) return 1;
  double tokens = 1, run = 1;
  for (int i = 0; i < g; ++i) tokens += (run *= accept[i]);
  const double spec = step_seconds(n * (1 + g)) + static_cast<double>(n * g) * draft_per_token_;
  return tokens * plain / spec;
}

double DraftPolicy::expected_speedup(int g, double a, int64_t n) const {
  std::array<double, 64> accept;
  accept.fill(a);
  return speedup(std::min(g, 64), accept.data(), n);
}

int DraftPolicy::choose(Seq& s, int max, int64_t n_decoding, int64_t step) const {
  max = std::min(max, 64);
  if (max <= 0) return 0;
  if (step_seconds(1) <= 0) return std::min(max, 3);  // no step timed yet
  const int64_t n = std::max<int64_t>(n_decoding, 1);
  // A step so compute-bound that even a sure guess would not pay: nothing to probe for (and a
  // draft model's probe would first have to catch up with the whole context).
  if (expected_speedup(1, 1.0, n) < kMinGain) return 0;
  std::array<double, 64> accept;
  for (int i = 0; i < max; ++i) accept[static_cast<size_t>(i)] = accept_rate(s, i);
  int best = 0;
  double best_gain = 1;
  for (int g = 1; g <= max; ++g) {
    const double gain = speedup(g, accept.data(), n);
    if (gain > best_gain) best = g, best_gain = gain;
  }
  if (best_gain < kMinGain) {
    if (step < s.next_probe) return 0;
    s.next_probe = step + s.probe_wait;
    s.probe_wait = std::min(kMaxProbeWait, 2 * s.probe_wait);
    return 1;
  }
  s.probe_wait = 8;
  // Around the best length in turn (+1, -1), so that the neighbouring step sizes stay measured.
  static constexpr int kJitter[4] = {0, 1, 0, -1};
  return std::clamp(best + kJitter[s.rounds % 4], 1, max);
}

void DraftPolicy::verified(Seq& s, int drafted, int accepted) {
  for (int i = 0; i < kPositions; ++i) {
    s.tried[i] *= kSeqDecay, s.accepted[i] *= kSeqDecay;
    pool_tried_[i] *= kPoolDecay, pool_accepted_[i] *= kPoolDecay;
  }
  // Positions 0 .. accepted were reached (the one after the last accepted token was rejected,
  // unless the draft ran out first); the first `accepted` were kept.
  const int reached = std::min({drafted, accepted + 1, kPositions});
  for (int i = 0; i < reached; ++i) {
    s.tried[i] += 1, pool_tried_[i] += 1;
    if (i < accepted) s.accepted[i] += 1, pool_accepted_[i] += 1;
  }
  ++s.rounds;
}

void DraftPolicy::decode_step(int64_t tokens, double seconds) {
  const double n = static_cast<double>(tokens);
  w_ = w_ * kFitDecay + 1;
  wn_ = wn_ * kFitDecay + n;
  wnn_ = wnn_ * kFitDecay + n * n;
  wt_ = wt_ * kFitDecay + seconds;
  wnt_ = wnt_ * kFitDecay + n * seconds;
}

void DraftPolicy::drafted(int64_t tokens, double seconds) {
  if (tokens <= 0) return;
  const double per = seconds / static_cast<double>(tokens);
  draft_per_token_ = draft_seen_ ? 0.9 * draft_per_token_ + 0.1 * per : per;
  draft_seen_ = true;
}

}  // namespace brisk
