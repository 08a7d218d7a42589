#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace brisk {

Sampler::Sampler(const SamplingParams& p) : p_(p), rng_(p.seed) {}

double Sampler::uniform() {
  // 53 random bits: the same value on every platform, unlike std::uniform_real_distribution.
  return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);
}

void Sampler::accept(int32_t token) {
  history_.push_back(token);
  const size_t keep = p_.penalty_last_n < 0 ? SIZE_MAX : static_cast<size_t>(p_.penalty_last_n);
  while (history_.size() > keep) history_.pop_front();
}

size_t Sampler::distribution(const float* logits, int64_t n_vocab) {
  cands_.resize(static_cast<size_t>(n_vocab));
  for (int64_t i = 0; i < n_vocab; ++i) cands_[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
  for (const auto& [t, b] : p_.logit_bias)
    if (t >= 0 && t < n_vocab) cands_[t].logit += b;

  const bool penalize =
      p_.repeat_penalty != 1.0f || p_.presence_penalty != 0.0f || p_.frequency_penalty != 0.0f;
  if (penalize && !history_.empty()) {
    std::unordered_map<int32_t, int> count;
    for (int32_t t : history_) ++count[t];
    for (const auto& [t, c] : count) {
      if (t < 0 || t >= n_vocab) continue;
      float& l = cands_[t].logit;
      l = l > 0 ? l / p_.repeat_penalty : l * p_.repeat_penalty;
      l -= static_cast<float>(c) * p_.frequency_penalty + p_.presence_penalty;
    }
  }

  auto by_logit = [](const Cand& a, const Cand& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
  };
  if (p_.temperature <= 0.0f) {
    std::iter_swap(cands_.begin(), std::min_element(cands_.begin(), cands_.end(), by_logit));
    cands_[0].p = 1.0f;
    return 1;
  }

  size_t n = cands_.size();
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < n) {
    std::partial_sort(cands_.begin(), cands_.begin() + p_.top_k, cands_.end(), by_logit);
    n = static_cast<size_t>(p_.top_k);
  } else {
    std::sort(cands_.begin(), cands_.end(), by_logit);
  }
  auto softmax = [&](float temp) {
    const float mx = cands_[0].logit;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += (cands_[i].p = std::exp((cands_[i].logit - mx) / temp));
    for (size_t i = 0; i < n; ++i) cands_[i].p = static_cast<float>(cands_[i].p / sum);
  };
  softmax(1.0f);
  if (p_.top_p < 1.0f) {
    double cum = 0;
    size_t keep = n;
    for (size_t i = 0; i < n; ++i) {
      cum += cands_[i].p;
      if (cum >= p_.top_p) {
        keep = i + 1;
        break;
      }
    }
    n = keep;
  }
  if (p_.min_p > 0.0f) {
    const float thresh = cands_[0].p * p_.min_p;
    size_t keep = 1;
    while (keep < n && cands_[keep].p >= thresh) ++keep;
    n = keep;
  }
  softmax(p_.temperature);
  return n;
}

int32_t Sampler::draw(size_t n, int32_t skip) {
  double total = 1.0;
  size_t last = n - 1;
  if (skip >= 0) {
    total = 0;
    for (size_t i = 0; i < n; ++i)
      if (cands_[i].id != skip) total += cands_[i].p, last = i;
    if (total <= 0) return skip;
  }
  const double r = uniform() * total;
  double cum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (cands_[i].id == skip) continue;
    cum += cands_[i].p;
    if (r < cum) return cands_[i].id;
  }
  return cands_[last].id;
}

int32_t Sampler::sample(const float* logits, int64_t n_vocab) {
  const size_t n = distribution(logits, n_vocab);
  return p_.temperature <= 0.0f ? cands_[0].id : draw(n, -1);
}

int32_t Sampler::sample_verified(const float* logits, int64_t n_vocab, int32_t draft,
                                 const Distribution& q) {
  const size_t n = distribution(logits, n_vocab);
  if (p_.temperature <= 0.0f) return cands_[0].id;
  double p_draft = 0;
  for (size_t i = 0; i < n; ++i)
    if (cands_[i].id == draft) p_draft = cands_[i].p;
  if (q.empty()) {
    if (p_draft > 0 && uniform() < p_draft) return draft;
    return draw(n, draft);
  }
  double q_draft = 0;
  for (const auto& [t, pr] : q)
    if (t == draft) q_draft = pr;
  if (uniform() * q_draft < p_draft) return draft;  // u < p/q without dividing by q
  // Rejected: draw from the residual max(0, p - q), which lives on p's candidates.
  q_dense_.resize(static_cast<size_t>(std::max<int64_t>(n_vocab, 0)), 0.0f);
  for (const auto& [t, pr] : q)
    if (t >= 0 && t < n_vocab) q_dense_[static_cast<size_t>(t)] = pr;
  double total = 0;
  for (size_t i = 0; i < n; ++i)
    total += std::max(0.0, static_cast<double>(cands_[i].p) - q_dense_[cands_[i].id]);
  int32_t tok = -1;
  if (total > 0) {
    const double r = uniform() * total;
    double cum = 0;
    for (size_t i = 0; i < n && tok < 0; ++i) {
      const double w = std::max(0.0, static_cast<double>(cands_[i].p) - q_dense_[cands_[i].id]);
      cum += w;
      if (w > 0 && r < cum) tok = cands_[i].id;
    }
    for (size_t i = n; tok < 0 && i-- > 0;)
      if (cands_[i].p > q_dense_[cands_[i].id]) tok = cands_[i].id;  // r rounded up to the total
  }
  for (const auto& [t, pr] : q)
    if (t >= 0 && t < n_vocab) q_dense_[static_cast<size_t>(t)] = 0.0f;
  // p <= q everywhere only when p equals q up to rounding: the draft was then as good as p.
  return tok >= 0 ? tok : draw(n, -1);
}

int32_t Sampler::propose(const float* logits, int64_t n_vocab, Distribution& q) {
  const size_t n = distribution(logits, n_vocab);
  q.clear();
  if (p_.temperature <= 0.0f) return cands_[0].id;
  q.reserve(n);
  for (size_t i = 0; i < n; ++i) q.emplace_back(cands_[i].id, cands_[i].p);
  return draw(n, -1);
}

TokenLogprobs token_logprobs(const float* logits, int64_t n_vocab, int32_t token, int top) {
  float mx = logits[0];
  for (int64_t i = 1; i < n_vocab; ++i) mx = std::max(mx, logits[i]);
  double sum = 0;
  for (int64_t i = 0; i < n_vocab; ++i) sum += std::exp(static_cast<double>(logits[i] - mx));
  const float lse = mx + static_cast<float>(std::log(sum));
  TokenLogprobs out;
  out.logprob = logits[token] - lse;
  const auto k = static_cast<size_t>(std::clamp<int64_t>(top, 0, n_vocab));
  if (k == 0) return out;
  std::vector<int32_t> ids(static_cast<size_t>(n_vocab));
  for (int64_t i = 0; i < n_vocab; ++i) ids[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                    [&](int32_t a, int32_t b) {
                      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
                    });
  for (size_t i = 0; i < k; ++i) out.top.emplace_back(ids[i], logits[ids[i]] - lse);
  return out;
}

}  // namespace brisk
