// Sampling under a constraint's mask: every setting applies to the allowed tokens' logits, so a
// draw must be distributed as plain sampling of the logits with the refused tokens at -inf, also
// where the sampler checks its unmasked draw first and skips the mask (chi-square tests, false
// alarm 1e-4 per comparison, fixed seeds). Verification of drafts under the mask, log-probabilities
// over the allowed tokens, and a constraint that allows nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "chi_square.h"
#include "engine/sampler.h"

namespace brisk {
namespace {

// A constraint as the sampler sees it, counting how often the whole mask is asked for.
struct FixedFilter final : TokenFilter {
  explicit FixedFilter(const std::vector<int32_t>& allowed, int64_t n_vocab)
      : bits(static_cast<size_t>((n_vocab + 63) / 64), 0) {
    for (int32_t t : allowed) bits[size_t(t) >> 6] |= uint64_t{1} << (t & 63);
  }
  bool allows(int32_t t) override { return (bits[size_t(t) >> 6] >> (t & 63)) & 1; }
  const uint64_t* mask() override {
    ++masks;
    return bits.data();
  }
  std::vector<uint64_t> bits;
  int masks = 0;
};

const std::vector<float> kLogits = {1.0f, 3.0f, 2.5f, -1.0f, 0.0f, 2.9f, 0.5f, 2.0f};
constexpr int64_t kV = 8;

std::vector<float> masked(const std::vector<float>& l, FixedFilter& f) {
  std::vector<float> out = l;
  for (int32_t t = 0; t < kV; ++t)
    if (!f.allows(t)) out[size_t(t)] = -std::numeric_limits<float>::infinity();
  return out;
}

struct Setting {
  const char* name;
  float temperature;
  int top_k;
  float top_p, min_p;
};

const Setting kSettings[] = {
    {"no cut", 1.0f, 0, 1.0f, 0.0f},
    {"cold, no cut", 0.5f, 0, 1.0f, 0.0f},
    {"top-k 3", 1.0f, 3, 1.0f, 0.0f},
    {"top-k 5", 1.3f, 5, 1.0f, 0.0f},
    {"min-p 0.2", 1.0f, 0, 1.0f, 0.2f},
    {"top-p 0.8", 1.0f, 0, 0.8f, 0.0f},
    {"top-k 4, min-p 0.3", 1.0f, 4, 1.0f, 0.3f},
    {"all", 0.9f, 5, 0.9f, 0.05f},
};

// Masks that keep the best token, refuse it, keep all of the top 3, or keep two of the worst.
const std::vector<std::vector<int32_t>> kMasks = {
    {1, 2, 3, 4, 7}, {0, 2, 4, 5, 6}, {1, 2, 5, 0}, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7}};

TEST(ConstrainedSampling, DrawsFollowTheMaskedDistributionUnderEverySetting) {
  constexpr int kDraws = 40000;
  uint64_t seed = 1;
  for (const Setting& st : kSettings)
    for (const auto& allowed : kMasks) {
      SamplingParams p;
      p.temperature = st.temperature, p.top_k = st.top_k, p.top_p = st.top_p, p.min_p = st.min_p;
      p.seed = seed++;
      Sampler constrained(p);
      p.seed += 1000;
      Sampler plain(p);
      FixedFilter f(allowed, kV);
      const std::vector<float> ml = masked(kLogits, f);
      std::map<int32_t, int> a, b;
      for (int i = 0; i < kDraws; ++i) {
        const int32_t t = constrained.sample(kLogits.data(), kV, &f);
        ASSERT_TRUE(t >= 0 && f.allows(t)) << st.name << ": drew refused token " << t;
        ++a[t];
        ++b[plain.sample(ml.data(), kV)];
      }
      const auto [chi2, cells] = chi_square(a, b, kV);
      if (cells >= 2) {
        EXPECT_LT(chi2, kChiSquareCritical[cells - 1])
            << st.name << ", mask of " << allowed.size() << ": chi-square " << chi2;
      }
    }
}

// The sampler checks its unmasked draw first: where the constraint allows it (and the cut is
// exact), the mask is never built.
TEST(ConstrainedSampling, AnAllowedDrawSkipsTheMask) {
  SamplingParams p;
  p.temperature = 0;
  Sampler greedy(p);
  FixedFilter keeps_best({1, 3}, kV), refuses_best({0, 3}, kV);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(greedy.sample(kLogits.data(), kV, &keeps_best), 1);
  EXPECT_EQ(keeps_best.masks, 0);
  EXPECT_EQ(greedy.sample(kLogits.data(), kV, &refuses_best), 0);
  EXPECT_EQ(refuses_best.masks, 1);

  p.temperature = 1.0f, p.top_k = 0, p.top_p = 1.0f, p.min_p = 0.0f;
  Sampler free_cut(p);
  FixedFilter everything({0, 1, 2, 3, 4, 5, 6, 7}, kV);
  for (int i = 0; i < 100; ++i) free_cut.sample(kLogits.data(), kV, &everything);
  EXPECT_EQ(everything.masks, 0);
  // Top-p's cut depends on the mass the mask removes: always masked.
  p.top_p = 0.9f;
  Sampler top_p(p);
  top_p.sample(kLogits.data(), kV, &everything);
  EXPECT_EQ(everything.masks, 1);
}

TEST(ConstrainedSampling, NothingAllowedGivesMinusOne) {
  FixedFilter none({}, kV);
  for (float temp : {0.0f, 1.0f}) {
    SamplingParams p;
    p.temperature = temp;
    Sampler s(p);
    EXPECT_EQ(s.sample(kLogits.data(), kV, &none), -1);
    Distribution q;
    EXPECT_EQ(s.propose(kLogits.data(), kV, q, &none), -1);
    EXPECT_EQ(s.sample_verified(kLogits.data(), kV, 1, {}, &none), -1);
  }
}

// Allowed tokens whose logits are all -inf (a broken model) are equally likely, never refused ones.
TEST(ConstrainedSampling, AllowedTokensWithoutLogitsAreStillDrawn) {
  std::vector<float> l(kV, -std::numeric_limits<float>::infinity());
  l[0] = 5.0f;
  FixedFilter f({2, 6}, kV);
  SamplingParams p;
  p.temperature = 1.0f, p.top_k = 0, p.top_p = 1.0f, p.min_p = 0.0f;
  Sampler s(p);
  std::map<int32_t, int> seen;
  for (int i = 0; i < 200; ++i) ++seen[s.sample(l.data(), kV, &f)];
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_GT(seen[2], 50);
  EXPECT_GT(seen[6], 50);
}

// A draft model proposing under the mask, verified under it: the kept tokens follow the masked p.
TEST(ConstrainedSampling, VerifiedDraftsFollowTheMaskedDistribution) {
  const std::vector<float> q_logits = {3.0f, 0.0f, 1.0f, 2.8f, 2.0f, 0.5f, 1.5f, 0.0f};
  constexpr int kDraws = 40000;
  for (const auto& allowed : kMasks) {
    SamplingParams p;
    p.temperature = 0.9f, p.top_k = 5, p.top_p = 0.97f, p.min_p = 0.02f;
    p.seed = 77;
    Sampler plain(p), target(p), draft(p);
    FixedFilter f(allowed, kV);
    const std::vector<float> ml = masked(kLogits, f);
    std::map<int32_t, int> a, b;
    Distribution q;
    for (int i = 0; i < kDraws; ++i) {
      ++a[plain.sample(ml.data(), kV)];
      const int32_t x = draft.propose(q_logits.data(), kV, q, &f);
      ASSERT_TRUE(f.allows(x));
      const int32_t t = target.sample_verified(kLogits.data(), kV, x, q, &f);
      ASSERT_TRUE(f.allows(t));
      ++b[t];
    }
    const auto [chi2, cells] = chi_square(a, b, kV);
    if (cells >= 2) {
      EXPECT_LT(chi2, kChiSquareCritical[cells - 1])
          << "mask of " << allowed.size() << ": chi-square " << chi2;
    }
  }
}

TEST(ConstrainedSampling, LogprobsAreOverTheAllowedTokens) {
  FixedFilter f({2, 4, 7}, kV);
  const TokenLogprobs lp = token_logprobs(kLogits.data(), kV, 2, 5, f.mask());
  const double z = std::exp(2.5) + std::exp(0.0) + std::exp(2.0);
  EXPECT_NEAR(lp.logprob, 2.5 - std::log(z), 1e-5);
  ASSERT_EQ(lp.top.size(), 3u);
  EXPECT_EQ(lp.top[0].first, 2);
  EXPECT_EQ(lp.top[1].first, 7);
  EXPECT_EQ(lp.top[2].first, 4);
}

}  // namespace
}  // namespace brisk
