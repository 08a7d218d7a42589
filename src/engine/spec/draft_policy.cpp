#include "engine/spec/draft_policy.h"

#include <algorithm>
#include <cmath>

#include "engine/limits.h"

namespace brisk {

namespace {
// Recent history weighs most: a sequence's counts decay per verification, the engine's pooled
// counts more slowly, the cost fits per pass.
constexpr double kSeqDecay = 0.95, kPoolDecay = 0.995, kFitDecay = 0.97;
constexpr double kPriorWeight = 2;  // drafts the pooled rate counts as in a sequence's estimate
constexpr double kMinGain = 1.02;   // a draft must promise at least this speedup
constexpr double kOptimism = 0.3;   // upper confidence bonus of a position never tried
constexpr int kMaxProbeWait = 64;
constexpr double kProbeBudget = 0.02;  // of the time since the last probe
// Spread the fits need before their slope is trusted over the prior (squared units of x), and
// at which a decode-step slope is remembered as measured.
constexpr double kPriorVariance = 0.25, kMeasuredVariance = 1;
}  // namespace

void LineFit::add(double x, double y) {
  w_ = w_ * decay_ + 1;
  wx_ = wx_ * decay_ + x;
  wxx_ = wxx_ * decay_ + x * x;
  wy_ = wy_ * decay_ + y;
  wxy_ = wxy_ * decay_ + x * y;
}

double LineFit::variance_x() const {
  return std::max(0.0, wxx_ / w_ - mean_x() * mean_x());
}

double LineFit::slope(double prior) const {
  const double cov = wxy_ / w_ - mean_x() * mean_y();
  return std::max(0.0, (cov + kPriorVariance * prior) / (variance_x() + kPriorVariance));
}

double LineFit::raw_slope() const {
  return std::max(0.0, (wxy_ / w_ - mean_x() * mean_y()) / variance_x());
}

double LineFit::at(double x, double prior_slope) const {
  if (empty()) return 0;
  return std::max(mean_y() + slope(prior_slope) * (x - mean_x()), 1e-9);
}

DraftPolicy::DraftPolicy() : steps_(kFitDecay), first_passes_(kFitDecay) {}

// The prior slope of decode steps: the last slope measured with enough spread, where the steps
// are as large as then or up to 4 times smaller (so a batch found compute-bound stays off until it
// shrinks while nothing is drafted to vary the step sizes); else the slope from them to the last
// step with prompt tokens, if that was larger (an upper bound: its attention is dearer); else a
// shape: a step of n tokens costs t(1 + n/8) / (1 + n̄/8), the first tokens riding on the weight
// reads almost free and a large batch paying its average per token.
double DraftPolicy::step_seconds(int64_t tokens) const {
  if (steps_.empty()) return 0;
  const double mn = steps_.mean_x(), mt = steps_.mean_y();
  double prior = mt / (mn + 8);
  if (measured_at_ > 0 && mn * 4 >= measured_at_)
    prior = measured_slope_;
  else if (prompt_tokens_ >= mn + 2)
    prior = std::max(0.0, (prompt_seconds_ - mt) / (prompt_tokens_ - mn));
  return steps_.at(static_cast<double>(tokens), prior);
}

// The first pass's rows cost their slope each (a pass of one row per sequence is its fixed cost).
double DraftPolicy::catch_up_seconds(int64_t lag) const {
  if (first_passes_.empty() || lag <= 0) return 0;
  const double prior = first_passes_.mean_y() / std::max(first_passes_.mean_x(), 1.0);
  return first_passes_.slope(prior) * static_cast<double>(lag);
}

// A position's rate is drawn towards the one before it where it has been tried little (drafts
// longer than any tried so far are judged by the last position measured, not by a coin), and a
// sequence's towards the engine's; then made optimistic where little is known (an upper
// confidence bound), so that a position rarely reached keeps being tried until it is measured,
// instead of a poor first guess ruling it out.
double DraftPolicy::accept_rate(const Seq& s, int i) const {
  i = std::min(i, kPositions - 1);
  double pool = 0.5, own = 0.5;
  for (int j = 0; j <= i; ++j) {  // (a few positions: cheap enough per call)
    pool = (pool_accepted_[j] + kPriorWeight * pool) / (pool_tried_[j] + kPriorWeight);
    own = (s.accepted[j] + kPriorWeight * pool) / (s.tried[j] + kPriorWeight);
  }
  return std::min(1.0, own + kOptimism / std::sqrt(1 + s.tried[i] + pool_tried_[i]));
}

double DraftPolicy::draft_cost() const {
  return draft_seen_ ? draft_per_token_ : draft_prior_ * step_seconds(1);
}

double DraftPolicy::speedup(int g, const double* accept, int64_t n) const {
  const double plain = step_seconds(n);
  if (g <= 0 || plain <= 0) return 1;
  double tokens = 1, run = 1;
  for (int i = 0; i < g; ++i) tokens += (run *= accept[i]);
  const double spec = step_seconds(n * (1 + g)) + static_cast<double>(n * g) * draft_cost();
  return tokens * plain / spec;
}

double DraftPolicy::expected_speedup(int g, double a, int64_t n) const {
  std::array<double, kMaxDraftTokens> accept;
  accept.fill(a);
  return speedup(std::min(g, kMaxDraftTokens), accept.data(), n);
}

int DraftPolicy::choose(Seq& s, int max, int64_t n_decoding, int64_t step, int64_t lag) const {
  max = std::min(max, kMaxDraftTokens);
  if (max <= 0) return 0;
  if (step_seconds(1) <= 0) return 0;  // a plain step is timed first
  const int64_t n = std::max<int64_t>(n_decoding, 1);
  // A step so compute-bound that even a sure guess would not pay: nothing to probe for.
  if (expected_speedup(1, 1.0, n) < kMinGain) return 0;
  std::array<double, kMaxDraftTokens> accept;
  for (int i = 0; i < max; ++i) accept[static_cast<size_t>(i)] = accept_rate(s, i);
  int best = 0;
  double best_gain = 1;
  for (int g = 1; g <= max; ++g) {
    const double gain = speedup(g, accept.data(), n);
    if (gain > best_gain) best = g, best_gain = gain;
  }
  if (best_gain < kMinGain) {
    if (step < s.next_probe) return 0;
    // A probe's catch-up, extra verified token and draft token, against this sequence's share of
    // the steps since the last probe.
    const double per_seq = step_seconds(n) / static_cast<double>(n);
    const double probe =
        catch_up_seconds(lag) + (step_seconds(2 * n) - step_seconds(n)) / n + draft_cost();
    const bool affordable = probe <= kProbeBudget * s.probe_wait * per_seq;
    s.next_probe = step + s.probe_wait;
    s.probe_wait = std::min(kMaxProbeWait, 2 * s.probe_wait);
    return affordable ? 1 : 0;  // a dear probe waits until enough time has passed to pay for it
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
  steps_.add(static_cast<double>(tokens), seconds);
  if (steps_.variance_x() >= kMeasuredVariance) {
    measured_slope_ = steps_.raw_slope();
    measured_at_ = steps_.mean_x();
  }
}

void DraftPolicy::prompt_step(int64_t tokens, double seconds) {
  prompt_tokens_ = static_cast<double>(tokens);
  prompt_seconds_ = seconds;
}

void DraftPolicy::drafted(int64_t tokens, double seconds) {
  if (tokens <= 0) return;
  const double per = seconds / static_cast<double>(tokens);
  draft_per_token_ = draft_seen_ ? 0.9 * draft_per_token_ + 0.1 * per : per;
  draft_seen_ = true;
}

void DraftPolicy::first_pass(int64_t rows, double seconds) {
  if (rows > 0) first_passes_.add(static_cast<double>(rows), seconds);
}

}  // namespace brisk
