#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <map>

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

}  // namespace
}  // namespace brisk
