#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "ops/activation.h"

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

namespace {

// A candidate as one integer whose ascending order is the draw order: logit descending, ties by
// id ascending (logits are not NaN here). Sorting these is a plain integer sort, without the
// indirect loads of a comparator that looks logits up by id.
uint64_t order_key(float logit, int32_t id) {
  uint32_t u;
  const float l = logit + 0.0f;  // -0 and +0 are the same logit
  std::memcpy(&u, &l, sizeof u);
  u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // ascending as the float ascends
  return (static_cast<uint64_t>(~u) << 32) | static_cast<uint32_t>(id);
}

int32_t key_id(uint64_t key) {
  return static_cast<int32_t>(static_cast<uint32_t>(key));
}

}  // namespace

// Logits are adjusted in place by token (biases, penalties); candidates are sorted only as far
// as a setting needs the order: top-k its k, top-p and min-p the prefix they may keep (cut_tail).
// With none of them (the OpenAI API's defaults) every token is a candidate in id order: sorting
// the whole vocabulary cost 2.3 ms a token at 32,000 tokens and 11 ms at 128,256
// (bench/kernels_bench BM_Sample), on the engine's one thread, per sequence.
size_t Sampler::distribution(const float* logits, int64_t n_vocab, const uint64_t* mask) {
  const auto V = static_cast<size_t>(n_vocab);
  constexpr float kNone = -std::numeric_limits<float>::infinity();
  lg_.resize(V);
  for (size_t i = 0; i < V; ++i)  // a NaN logit (a broken model) would break the order
    lg_[i] = std::isnan(logits[i]) ? kNone : logits[i];
  if (mask && !apply_mask(mask, V)) return 0;
  for (const auto& [t, b] : p_.logit_bias)
    if (t >= 0 && t < n_vocab) lg_[static_cast<size_t>(t)] += b;

  const bool penalize =
      p_.repeat_penalty != 1.0f || p_.presence_penalty != 0.0f || p_.frequency_penalty != 0.0f;
  if (penalize && !history_.empty()) {
    std::unordered_map<int32_t, int> count;
    for (int32_t t : history_) ++count[t];
    for (const auto& [t, c] : count) {
      if (t < 0 || t >= n_vocab) continue;
      float& l = lg_[static_cast<size_t>(t)];
      l = l > 0 ? l / p_.repeat_penalty : l * p_.repeat_penalty;
      l -= static_cast<float>(c) * p_.frequency_penalty + p_.presence_penalty;
    }
  }

  // Only -inf logits allowed (a broken model): the allowed tokens are equally likely.
  if (mask && max_value(lg_.data(), n_vocab) == kNone)
    for (size_t i = 0; i < V; ++i)
      if ((mask[i >> 6] >> (i & 63)) & 1) lg_[i] = 0.0f;

  if (p_.temperature <= 0.0f) {
    size_t best = 0;  // the first of equal maxima: ties go to the lowest id
    for (size_t i = 1; i < V; ++i)
      if (lg_[i] > lg_[best]) best = i;
    cands_.assign(1, {static_cast<int32_t>(best), lg_[best], 1.0f});
    return 1;
  }

  size_t n = V;
  bool sorted = false;
  ids_.resize(V);
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < n) {
    n = static_cast<size_t>(p_.top_k);
    keys_.resize(V);
    for (size_t i = 0; i < V; ++i) keys_[i] = order_key(lg_[i], static_cast<int32_t>(i));
    // A heap of k: most keys need one comparison with its top (nth_element moved them all).
    std::partial_sort(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(n), keys_.end());
    for (size_t i = 0; i < n; ++i) ids_[i] = key_id(keys_[i]);
    sorted = true;
  } else {
    std::iota(ids_.begin(), ids_.end(), 0);
  }
  const bool cut = p_.top_p < 1.0f || p_.min_p > 0.0f;
  if (cut) n = cut_tail(n, sorted);

  // The kept candidates' probabilities at the temperature.
  const float* x = lg_.data();  // ids_ is still 0, 1, 2, ... when nothing cut or sorted it
  if (sorted || cut) {
    x_.resize(n);
    for (size_t i = 0; i < n; ++i) x_[i] = lg_[static_cast<size_t>(ids_[i])];
    x = x_.data();
  }
  w_.resize(n);
  const double sum =
      softmax_weights(x, static_cast<int64_t>(n), max_value(x, static_cast<int64_t>(n)),
                      1.0f / p_.temperature, w_.data());
  cands_.resize(n);
  for (size_t i = 0; i < n; ++i) cands_[i] = {ids_[i], x[i], static_cast<float>(w_[i] / sum)};
  return n;
}

size_t Sampler::cut_tail(size_t n, bool sorted) {
  // Probabilities at temperature 1 over the n candidates, by position in ids_.
  x_.resize(n);
  for (size_t i = 0; i < n; ++i) x_[i] = lg_[static_cast<size_t>(ids_[i])];
  const float mx = max_value(x_.data(), static_cast<int64_t>(n));
  w_.resize(n);
  const double sum = softmax_weights(x_.data(), static_cast<int64_t>(n), mx, 1.0f, w_.data());

  // Unsorted (ids_ still 0..n-1, so positions are tokens), the kept tokens are the first of the
  // order by logit, all within some gap below the best logit: only the candidates within it are
  // sorted. Min-p's gap is exact (-log min_p); top-p's is read off a histogram of the weights by
  // gap, in bins of 1/16 logit, at the first bin where the mass above reaches top-p, one bin
  // lower for rounding. If the cut still lies past the sorted prefix the gap widens and sorts
  // again, so the tokens kept and their order are always the full sort's.
  constexpr int kBinsPerLogit = 16, kBins = 64 * kBinsPerLogit;  // e^-64: past any top-p
  constexpr float kNoGap = std::numeric_limits<float>::infinity();
  float gap = kNoGap, min_p_gap = kNoGap;
  if (!sorted) {
    if (p_.min_p > 0.0f) gap = min_p_gap = -std::log(p_.min_p) + 1.0f / kBinsPerLogit;
    if (p_.top_p < 1.0f) {
      hist_.assign(kBins, 0.0);
      for (size_t i = 0; i < n; ++i) {
        const float g = (mx - x_[i]) * kBinsPerLogit;
        hist_[g < kBins - 1 ? static_cast<size_t>(g) : kBins - 1] += w_[i];
      }
      const double need = static_cast<double>(p_.top_p) * sum * (1 + 1e-6);
      double mass = 0;
      for (int b = 0; b < kBins - 1; ++b)
        if ((mass += hist_[static_cast<size_t>(b)]) >= need) {
          gap = std::min(gap, static_cast<float>(b + 2) / kBinsPerLogit);
          break;
        }
    }
  }
  for (;; gap = gap < 64.0f ? gap * 2 : kNoGap) {
    size_t m = n;  // candidates sorted, first in ids_
    if (!sorted) {
      keys_.clear();
      const float floor = gap == kNoGap ? -kNoGap : mx - gap;
      for (size_t i = 0; i < n; ++i)
        if (x_[i] >= floor) keys_.push_back(order_key(x_[i], static_cast<int32_t>(i)));
      std::sort(keys_.begin(), keys_.end());
      m = keys_.size();
      for (size_t i = 0; i < m; ++i) ids_[i] = key_id(keys_[i]);
    }
    const auto prob = [&](size_t i) {
      return static_cast<float>(w_[sorted ? i : static_cast<size_t>(ids_[i])] / sum);
    };
    size_t keep = m;
    // Every candidate sorted, or the ones left out all below min-p's threshold: the cuts are exact.
    bool found = m == n || gap >= min_p_gap;
    if (p_.top_p < 1.0f) {
      double cum = 0;
      for (size_t i = 0; i < m && keep == m; ++i)
        if ((cum += prob(i)) >= p_.top_p) keep = i + 1, found = true;
    }
    if (p_.min_p > 0.0f) {
      const float thresh = prob(0) * p_.min_p;
      size_t k = 1;
      while (k < keep && prob(k) >= thresh) ++k;
      found = found || k < m;
      keep = std::min(keep, k);
    }
    if (found) return keep;
  }
}

bool Sampler::apply_mask(const uint64_t* mask, size_t V) {
  bool any = false;
  for (size_t w = 0; w * 64 < V; ++w) {
    const size_t end = std::min(V, w * 64 + 64);
    const uint64_t bits =
        end - w * 64 == 64 ? mask[w] : mask[w] & ((uint64_t{1} << (end & 63)) - 1);
    any = any || bits != 0;
    if (bits == ~uint64_t{0}) continue;
    for (size_t i = w * 64; i < end; ++i)
      if (!((bits >> (i & 63)) & 1)) lg_[i] = -std::numeric_limits<float>::infinity();
  }
  return any;
}

int32_t Sampler::draw(size_t n, int32_t skip) {
  double total = 1.0;
  size_t last = n - 1;
  // Rounding may leave r past the last weight: the fallback is the last candidate with any (a
  // token a mask refused has none).
  while (last > 0 && !(cands_[last].p > 0)) --last;
  if (skip >= 0) {
    total = 0;
    for (size_t i = 0; i < n; ++i)
      if (cands_[i].id != skip && cands_[i].p > 0) total += cands_[i].p, last = i;
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

// Drawing from the unmasked candidates until the token is allowed draws from the masked
// distribution when the settings' cut commutes with the mask: always without top-k, top-p and
// min-p (and greedy); min-p when the most likely token is allowed (its threshold is relative to
// it); top-k when all k are allowed, or when min-p cut below k (the tokens top-k would bring in
// under the mask rank below one min-p cut). Top-p's cut moves with the mass the mask removes.
bool Sampler::unmasked_draw_exact(size_t n, int64_t n_vocab, int32_t tok, TokenFilter& f) {
  if (!f.allows(tok)) return false;
  if (p_.temperature <= 0.0f) return true;
  const bool top_k = p_.top_k > 0 && p_.top_k < n_vocab;
  if (top_k && n == static_cast<size_t>(p_.top_k)) {
    for (size_t i = 0; i < n; ++i)
      if (cands_[i].id != tok && !f.allows(cands_[i].id)) return false;
    return true;
  }
  if (top_k || p_.min_p > 0.0f) return cands_[0].id == tok || f.allows(cands_[0].id);
  return true;
}

int32_t Sampler::sample(const float* logits, int64_t n_vocab, TokenFilter* filter) {
  const bool greedy = p_.temperature <= 0.0f;
  if (filter && (greedy || p_.top_p >= 1.0f)) {
    const size_t n = distribution(logits, n_vocab, nullptr);
    const int32_t tok = greedy ? cands_[0].id : draw(n, -1);
    if (unmasked_draw_exact(n, n_vocab, tok, *filter)) return tok;
  }
  const size_t n = distribution(logits, n_vocab, filter ? filter->mask() : nullptr);
  if (n == 0) return -1;
  return greedy ? cands_[0].id : draw(n, -1);
}

int32_t Sampler::sample_verified(const float* logits, int64_t n_vocab, int32_t draft,
                                 const Distribution& q, TokenFilter* filter) {
  if (p_.temperature <= 0.0f) return sample(logits, n_vocab, filter);  // the argmax either way
  const size_t n = distribution(logits, n_vocab, filter ? filter->mask() : nullptr);
  if (n == 0) return -1;
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

int32_t Sampler::propose(const float* logits, int64_t n_vocab, Distribution& q,
                         TokenFilter* filter) {
  q.clear();
  if (p_.temperature <= 0.0f) return sample(logits, n_vocab, filter);  // q stays one-hot
  const size_t n = distribution(logits, n_vocab, filter ? filter->mask() : nullptr);
  if (n == 0) return -1;
  q.reserve(n);
  for (size_t i = 0; i < n; ++i) q.emplace_back(cands_[i].id, cands_[i].p);
  return draw(n, -1);
}

TokenLogprobs token_logprobs(const float* logits, int64_t n_vocab, int32_t token, int top,
                             const uint64_t* mask) {
  const auto allowed = [mask](int64_t i) { return !mask || ((mask[i >> 6] >> (i & 63)) & 1); };
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n_vocab; ++i)
    if (allowed(i)) mx = std::max(mx, logits[i]);
  double sum = 0;
  for (int64_t i = 0; i < n_vocab; ++i)
    if (allowed(i)) sum += std::exp(static_cast<double>(logits[i] - mx));
  const float lse = mx + static_cast<float>(std::log(sum));
  TokenLogprobs out;
  out.logprob = logits[token] - lse;
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < n_vocab && top > 0; ++i)
    if (allowed(i)) ids.push_back(static_cast<int32_t>(i));
  const auto k = std::min(ids.size(), static_cast<size_t>(std::max(top, 0)));
  if (k == 0) return out;
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                    [&](int32_t a, int32_t b) {
                      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
                    });
  for (size_t i = 0; i < k; ++i) out.top.emplace_back(ids[i], logits[ids[i]] - lse);
  return out;
}

}  // namespace brisk
