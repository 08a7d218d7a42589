// Speculative decoding's parts: prompt lookup's proposals, and the verification rule, whose tokens
// must be distributed exactly as plain sampling's (chi-square tests), for deterministic proposers
// and for a draft model's sampled ones. The engine-level promise,
// greedy output unchanged token for token in any batch, is in engine_test.cpp.
#include <gtest/gtest.h>

#include <map>

#include "chi_square.h"
#include "engine/sampler.h"
#include "engine/spec/ngram_proposer.h"

namespace brisk {
namespace {

TEST(NgramProposer, ProposesWhatFollowedTheLatestLongestMatch) {
  NgramConfig c;
  c.n_max = 3, c.n_min = 1;
  // "1 2 3" occurred twice: the latest occurrence (followed by 7 8) wins.
  const std::vector<int32_t> t = {1, 2, 3, 4, 5, 1, 2, 3, 7, 8, 9, 1, 2, 3};
  EXPECT_EQ(ngram_propose(t, c, 2), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(ngram_propose(t, c, 6), (std::vector<int32_t>{7, 8, 9, 1, 2, 3}));
  // The latest has only 6 tokens after it; the earlier one has the 10 asked for.
  EXPECT_EQ(ngram_propose(t, c, 10), (std::vector<int32_t>{4, 5, 1, 2, 3, 7, 8, 9, 1, 2}));
  EXPECT_TRUE(ngram_propose(t, c, 0).empty());
  // Only a 1-gram matches: 9 was followed by 5.
  const std::vector<int32_t> u = {4, 9, 5, 6, 3, 9};
  EXPECT_EQ(ngram_propose(u, c, 3), (std::vector<int32_t>{5, 6, 3}));
  c.n_min = 2;
  EXPECT_TRUE(ngram_propose(u, c, 3).empty());
  // Nothing to match, and too short to match.
  EXPECT_TRUE(ngram_propose(std::vector<int32_t>{1, 2, 3}, c, 4).empty());
  EXPECT_TRUE(ngram_propose(std::vector<int32_t>{1}, c, 4).empty());
  EXPECT_TRUE(ngram_propose(std::vector<int32_t>{}, c, 4).empty());
  // A run of one token proposes more of it: from the earliest occurrence, which has the most after
  // it.
  c.n_min = 1;
  EXPECT_EQ(ngram_propose(std::vector<int32_t>{5, 5, 5, 5, 5}, c, 4), (std::vector<int32_t>{5, 5}));
  EXPECT_EQ(ngram_propose(std::vector<int32_t>{6, 5, 5, 5, 5}, c, 1), (std::vector<int32_t>{5}));
}

TEST(SpeculativeSampling, GreedyVerificationIsTheArgmax) {
  SamplingParams p;
  p.temperature = 0;
  p.repeat_penalty = 1.3f;
  Sampler s(p), v(p);
  const std::vector<float> l = {1.0f, 3.0f, 2.5f, -1.0f, 0.0f, 2.9f};
  for (int32_t t : {1, 1, 5, 2}) {
    const int32_t a = s.sample(l.data(), 6);
    EXPECT_EQ(v.sample_verified(l.data(), 6, t), a);
    s.accept(a), v.accept(a);
  }
}

// Two-sample chi-square between plain sampling and verification of a fixed draft, for drafts the
// distribution favours, disfavours, and cuts off (top-k). With the false-alarm rate 1e-4 per
// comparison (critical values of chi-square at p = 1e-4 by degrees of freedom) and 4 comparisons,
// a correct rule fails for fewer than 1 in 2,500 choices of seeds; the seeds here are fixed.
TEST(SpeculativeSampling, VerifiedTokensFollowTheTargetDistribution) {
  const std::vector<float> l = {1.0f, 3.0f, 2.5f, -1.0f, 0.0f, 2.9f};
  SamplingParams p;
  p.temperature = 0.9f;
  p.top_k = 5, p.top_p = 0.97f, p.min_p = 0.02f;
  constexpr int kDraws = 60000;
  for (int32_t draft : {1, 2, 4, 3}) {  // likely, less likely, unlikely, cut by top-k
    p.seed = 7 + static_cast<uint64_t>(draft);
    Sampler plain(p);
    p.seed += 1000;
    Sampler verified(p);
    std::map<int32_t, int> a, b;
    for (int i = 0; i < kDraws; ++i) {
      ++a[plain.sample(l.data(), 6)];
      ++b[verified.sample_verified(l.data(), 6, draft)];
    }
    const auto [chi2, cells] = chi_square(a, b, 6);
    ASSERT_GE(cells, 2);
    EXPECT_LT(chi2, kChiSquareCritical[cells - 1]) << "draft " << draft << ": chi-square " << chi2;
    EXPECT_EQ(b[3], 0) << "a token top-k removes was drawn";
  }
}

// A draft model's proposals: drawn from q (the draft's logits under the same settings), kept with
// probability min(1, p/q), else replaced by a draw from max(0, p - q). The tokens must follow p
// whatever q is: close to p, far from it, or putting mass where p has none (top-k cuts token 3
// from p but not from q). Same false-alarm rate as above.
TEST(SpeculativeSampling, DraftModelProposalsVerifiedFollowTheTargetDistribution) {
  const std::vector<float> p_logits = {1.0f, 3.0f, 2.5f, -1.0f, 0.0f, 2.9f};
  const std::vector<std::vector<float>> q_logits = {
      {1.1f, 2.9f, 2.4f, -1.0f, 0.1f, 3.0f},  // a good draft
      {3.0f, 0.0f, 1.0f, 2.8f, 2.0f, 0.5f},   // a poor one
      {0.0f, 0.0f, 0.0f, 9.0f, 0.0f, 0.0f}};  // sure of a token p cannot have
  SamplingParams p;
  p.temperature = 0.9f;
  p.top_k = 5, p.top_p = 0.97f, p.min_p = 0.02f;
  constexpr int kDraws = 60000;
  for (size_t d = 0; d < q_logits.size(); ++d) {
    p.seed = 11 + d;
    Sampler plain(p);
    p.seed += 1000;
    Sampler target(p);
    p.seed += 1000;
    Sampler draft(p);
    std::map<int32_t, int> a, b;
    int kept = 0;
    Distribution q;
    for (int i = 0; i < kDraws; ++i) {
      ++a[plain.sample(p_logits.data(), 6)];
      const int32_t x = draft.propose(q_logits[d].data(), 6, q);
      const int32_t t = target.sample_verified(p_logits.data(), 6, x, q);
      kept += t == x;
      ++b[t];
    }
    const auto [chi2, cells] = chi_square(a, b, 6);
    ASSERT_GE(cells, 2);
    EXPECT_LT(chi2, kChiSquareCritical[cells - 1]) << "draft " << d << ": chi-square " << chi2;
    EXPECT_EQ(b[3], 0) << "a token top-k removes from p was drawn";
    if (d == 0) {
      EXPECT_GT(kept, kDraws * 9 / 10) << "a draft close to p is kept nearly always";
    }
  }
}

TEST(SpeculativeSampling, GreedyProposalsAreTheArgmaxWithoutADistribution) {
  SamplingParams p;
  p.temperature = 0;
  Sampler s(p);
  Distribution q = {{1, 0.5f}};
  const std::vector<float> l = {1.0f, 3.0f, 2.5f};
  EXPECT_EQ(s.propose(l.data(), 3, q), 1);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace brisk
