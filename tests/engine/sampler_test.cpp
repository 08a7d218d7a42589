#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "support/test_util.h"

namespace brisk {
namespace {

std::vector<float> logits() {
  return {1.0f, 3.0f, 2.5f, -1.0f, 0.0f, 2.9f};
}

TEST(Sampler, GreedyPicksTheLargestLogit) {
  SamplingParams p;
  p.temperature = 0;
  Sampler s(p);
  EXPECT_EQ(s.sample(logits().data(), 6), 1);
}

TEST(Sampler, SameSeedSameTokens) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0, p.top_p = 1, p.min_p = 0;
  p.seed = 42;
  Sampler a(p), b(p);
  std::vector<int32_t> ta, tb;
  for (int i = 0; i < 200; ++i) {
    ta.push_back(a.sample(logits().data(), 6));
    tb.push_back(b.sample(logits().data(), 6));
  }
  EXPECT_EQ(ta, tb);
  p.seed = 43;
  Sampler c(p);
  std::vector<int32_t> tc;
  for (int i = 0; i < 200; ++i) tc.push_back(c.sample(logits().data(), 6));
  EXPECT_NE(ta, tc);
}

TEST(Sampler, FrequenciesFollowTheSoftmax) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0, p.top_p = 1, p.min_p = 0;
  Sampler s(p);
  const std::vector<float> l = {0.0f, std::log(3.0f)};  // probabilities 1/4, 3/4
  int ones = 0;
  for (int i = 0; i < 20000; ++i) ones += s.sample(l.data(), 2);
  EXPECT_NEAR(ones / 20000.0, 0.75, 0.02);
}

TEST(Sampler, TopKOneIsGreedy) {
  SamplingParams p;
  p.temperature = 5.0f;
  p.top_k = 1;
  Sampler s(p);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(logits().data(), 6), 1);
}

TEST(Sampler, TopPAndMinPCutTheTail) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 0.5f;  // token 1 alone (p≈0.36) is not enough; tokens 1 and 5 are
  p.min_p = 0;
  Sampler s(p);
  std::map<int32_t, int> seen;
  for (int i = 0; i < 2000; ++i) seen[s.sample(logits().data(), 6)]++;
  for (const auto& [id, n] : seen) EXPECT_TRUE(id == 1 || id == 5) << id;
  SamplingParams q;
  q.temperature = 1.0f, q.top_k = 0, q.top_p = 1,
  q.min_p = 0.7f;  // keeps p >= 0.7 * p(best): tokens 1, 5
  Sampler m(q);
  for (int i = 0; i < 2000; ++i) {
    const int32_t id = m.sample(logits().data(), 6);
    EXPECT_TRUE(id == 1 || id == 5) << id;
  }
}

TEST(Sampler, PenaltiesDemoteRecentTokens) {
  SamplingParams p;
  p.temperature = 0;
  p.repeat_penalty = 2.0f;  // 3.0 -> 1.5: token 5 (2.9) wins
  Sampler s(p);
  s.accept(1);
  EXPECT_EQ(s.sample(logits().data(), 6), 5);
  SamplingParams f;
  f.temperature = 0;
  f.frequency_penalty = 0.1f;  // token 1 seen 3 times: 3.0 - 0.3 = 2.7 < 2.9
  Sampler s2(f);
  for (int i = 0; i < 3; ++i) s2.accept(1);
  EXPECT_EQ(s2.sample(logits().data(), 6), 5);
  SamplingParams pr;
  pr.temperature = 0;
  pr.presence_penalty = 0.2f;  // 3.0 - 0.2 = 2.8 < 2.9
  Sampler s3(pr);
  s3.accept(1);
  EXPECT_EQ(s3.sample(logits().data(), 6), 5);
}

TEST(Sampler, PenaltyWindowForgetsOldTokens) {
  SamplingParams p;
  p.temperature = 0;
  p.repeat_penalty = 2.0f;
  p.penalty_last_n = 2;
  Sampler s(p);
  s.accept(1);
  s.accept(3);
  s.accept(4);  // token 1 fell out of the window
  EXPECT_EQ(s.sample(logits().data(), 6), 1);
}

// The settings' cuts by the book: sort the whole vocabulary (by logit, ties by id), top-k, then
// softmax in double, top-p and min-p on that order.
struct Reference {
  std::vector<int32_t> order;  // after top-k
  std::vector<double> cum;     // cumulative probability at temperature 1 along order
  size_t keep = 0;             // the tokens kept: a prefix of order
};

Reference reference(const std::vector<float>& l, const SamplingParams& p) {
  Reference r;
  r.order.resize(l.size());
  for (size_t i = 0; i < l.size(); ++i) r.order[i] = static_cast<int32_t>(i);
  std::sort(r.order.begin(), r.order.end(),
            [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
  if (p.top_k > 0) r.order.resize(std::min(r.order.size(), static_cast<size_t>(p.top_k)));
  const size_t n = r.order.size();
  std::vector<double> w(n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += (w[i] = std::exp(double{l[r.order[i]]} - l[r.order[0]]));
  r.cum.resize(n);
  double c = 0;
  for (size_t i = 0; i < n; ++i) r.cum[i] = (c += w[i] / sum);
  r.keep = n;
  if (p.top_p < 1.0f)
    for (size_t i = 0; i < n; ++i)
      if (r.cum[i] >= p.top_p) {
        r.keep = i + 1;
        break;
      }
  if (p.min_p > 0.0f) {
    size_t k = 1;
    while (k < r.keep && w[k] >= w[0] * p.min_p) ++k;
    r.keep = k;
  }
  return r;
}

// A large vocabulary with a peaked head, a long flat tail and ties: the sampler sorts only what a
// cut may keep, and must keep the tokens (and probabilities) the full sort keeps. Where top-p's
// cut lies in a tail whose cumulative probability is top-p to within float exp and rounding
// (5e-6), the two may end some tail tokens apart, both kept sets prefixes of the full order.
TEST(Sampler, CutsMatchAFullSortOnALargeVocabulary) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    auto l = test::random_floats(50000, seed);
    for (size_t i = 0; i < l.size(); ++i) {
      l[i] *= seed == 1 ? 2.0f : seed == 2 ? 8.0f : 30.0f;
      if (i % 97 == 0) l[i] = l[i / 2];  // ties
    }
    l[123] = 25, l[4567] = 24.5f, l[40000] = 25;
    for (float top_p : {1.0f, 0.5f, 0.9f, 0.999f, 0.99999f})
      for (float min_p : {0.0f, 0.05f, 0.3f, 1e-6f})
        for (int top_k : {0, 40, 4000}) {
          SamplingParams p;
          p.temperature = 0.7f, p.top_p = top_p, p.min_p = min_p, p.top_k = top_k;
          const std::string at = std::to_string(seed) + " top_p " + std::to_string(top_p) +
                                 " min_p " + std::to_string(min_p) + " top_k " +
                                 std::to_string(top_k);
          Sampler s(p);
          Distribution q;
          s.propose(l.data(), static_cast<int64_t>(l.size()), q);
          const auto r = reference(l, p);
          const size_t k = q.size();
          ASSERT_GE(k, 1u) << at;
          if (k != r.keep) {
            const size_t lo = std::min(k, r.keep), hi = std::max(k, r.keep);
            ASSERT_LE(hi, r.order.size()) << at;
            ASSERT_NEAR(r.cum[lo - 1], top_p, 5e-6) << at << " kept " << k << " want " << r.keep;
            ASSERT_NEAR(r.cum[hi - 1], top_p, 5e-6) << at << " kept " << k << " want " << r.keep;
          }
          // q is the full order's first k tokens, with their softmax at the temperature.
          std::vector<std::pair<int32_t, double>> want(k);
          double sum = 0;
          for (size_t i = 0; i < k; ++i) {
            const int32_t t = r.order[i];
            want[i] = {t, std::exp((double{l[t]} - l[r.order[0]]) / p.temperature)};
            sum += want[i].second;
          }
          std::sort(want.begin(), want.end());
          std::sort(q.begin(), q.end());
          for (size_t i = 0; i < k; ++i) {
            ASSERT_EQ(q[i].first, want[i].first) << at;
            const double pw = want[i].second / sum;
            ASSERT_NEAR(q[i].second, pw, 1e-5 * pw + 1e-9) << at;
          }
        }
  }
}

// -0 and +0 are one logit: the tie goes to the lower id, as for any tie.
TEST(Sampler, SignedZerosTieByIdUnderTopK) {
  const std::vector<float> l = {-1.0f, 0.0f, -0.0f, 0.0f, -0.0f};
  for (int top_k : {2, 3}) {
    SamplingParams p;
    p.temperature = 1.0f, p.top_k = top_k, p.top_p = 1.0f, p.min_p = 0.0f;
    Sampler s(p);
    Distribution q;
    s.propose(l.data(), 5, q);
    ASSERT_EQ(q.size(), static_cast<size_t>(top_k));
    for (int i = 0; i < top_k; ++i) EXPECT_EQ(q[static_cast<size_t>(i)].first, i + 1);
  }
}

TEST(Sampler, NanLogitsNeitherHangNorWin) {
  std::vector<float> l = logits();
  l[0] = std::nanf("");
  for (float top_p : {1.0f, 0.9f}) {
    SamplingParams p;
    p.temperature = 1.0f, p.top_k = 0, p.top_p = top_p, p.min_p = 0.01f;
    Sampler s(p);
    for (int i = 0; i < 100; ++i) EXPECT_NE(s.sample(l.data(), 6), 0);
  }
}

}  // namespace
}  // namespace brisk
