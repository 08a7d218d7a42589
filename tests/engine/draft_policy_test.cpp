// The draft policy on step costs given to it: long drafts where guesses are good and extra tokens
// nearly free, none where a step is compute-bound (not even probes) or the proposer is dear (with
// rare probes).
#include <gtest/gtest.h>

#include "engine/spec/draft_policy.h"

namespace brisk {
namespace {

// Teaches the policy a step cost of fixed + per_token * n seconds over varied step sizes.
void teach(DraftPolicy& p, double fixed, double per_token, int max_n) {
  for (int i = 0; i < 200; ++i) {
    const int n = 1 + i % max_n;
    p.decode_step(n, fixed + per_token * n);
  }
}

void accept(DraftPolicy& p, DraftPolicy::Seq& s, int rounds, int drafted, int accepted) {
  for (int i = 0; i < rounds; ++i) p.verified(s, drafted, accepted);
}

TEST(DraftPolicy, DraftsNothingBeforeAPlainStepIsTimed) {
  DraftPolicy p;
  DraftPolicy::Seq s;
  EXPECT_EQ(p.choose(s, 8, 1, 0), 0);
  p.decode_step(1, 0.01);
  EXPECT_GT(p.choose(s, 8, 1, 1), 0);  // the prior: extra tokens nearly free at first
  EXPECT_EQ(p.choose(s, 0, 1, 2), 0);
}

TEST(DraftPolicy, FitsTheStepCost) {
  DraftPolicy p;
  teach(p, 0.010, 0.001, 9);
  EXPECT_NEAR(p.step_seconds(1), 0.011, 1e-4);  // (the prior pulls the slope a little)
  EXPECT_NEAR(p.step_seconds(20), 0.030, 3e-4);
  p.drafted(4, 0.002);
  EXPECT_NEAR(p.draft_seconds_per_token(), 0.0005, 1e-9);
}

TEST(DraftPolicy, LongDraftsWhenGuessesAreGoodAndTokensCheap) {
  DraftPolicy p;
  teach(p, 0.010, 0.0002, 9);  // memory-bound: an extra token costs 2% of a step
  p.drafted(100, 0.005);       // and drafting 0.5% per token
  DraftPolicy::Seq s;
  accept(p, s, 30, 6, 6);  // everything accepted
  int total = 0;
  for (int i = 0; i < 4; ++i) {
    const int g = p.choose(s, 8, 1, i);
    EXPECT_GE(g, 6);
    total += g;
    p.verified(s, g, g);
  }
  EXPECT_GE(total, 28);
  EXPECT_GT(p.expected_speedup(8, 0.95, 1), 3.0);
}

TEST(DraftPolicy, ShorterDraftsAsAcceptanceFalls) {
  DraftPolicy p;
  teach(p, 0.010, 0.0005, 9);
  p.drafted(100, 0.03);  // 3% of a step per drafted token
  DraftPolicy::Seq good, fair;
  accept(p, good, 30, 4, 4);
  accept(p, fair, 30, 2, 1);  // half accepted
  int g_good = 0, g_fair = 0;
  for (int i = 0; i < 4; ++i) {
    g_good += p.choose(good, 8, 1, i);
    g_fair += p.choose(fair, 8, 1, i);
  }
  EXPECT_GT(g_good, g_fair);
  EXPECT_GT(g_fair, 0);
}

TEST(DraftPolicy, OffWithoutProbesWhereStepsAreComputeBound) {
  DraftPolicy p;
  teach(p, 0.0001, 0.001, 64);  // a token costs as much in a batch as alone
  p.drafted(100, 0.001);
  DraftPolicy::Seq s;
  accept(p, s, 30, 3, 3);  // even with every guess right
  EXPECT_LT(p.expected_speedup(1, 1.0, 32), 1.0);
  for (int64_t step = 0; step < 200; ++step) EXPECT_EQ(p.choose(s, 8, 32, step), 0);
  // Plain steps alone (nothing drafted: no spread in size) do not make it forget the slope.
  for (int i = 0; i < 300; ++i) p.decode_step(32, 0.0321);
  for (int64_t step = 200; step < 300; ++step) EXPECT_EQ(p.choose(s, 8, 32, step), 0);
  // Where steps are memory-bound, the same sequence speculates.
  DraftPolicy q;
  teach(q, 0.010, 0.0002, 9);
  EXPECT_GT(q.choose(s, 8, 1, 0), 0);
}

TEST(DraftPolicy, OffWhenTheProposerCostsAsMuchAsItSaves) {
  DraftPolicy p;
  teach(p, 0.010, 0.0005, 9);
  p.drafted(10, 0.08);  // each drafted token costs 0.8 of a step (layer skipping, most layers)
  DraftPolicy::Seq s;
  accept(p, s, 30, 2, 0);
  // Probes of one token, backing off, and as dear as 0.8 of a step: only every 64 steps.
  int drafts = 0;
  for (int64_t step = 0; step < 200; ++step) {
    const int g = p.choose(s, 8, 1, step);
    EXPECT_LE(g, 1);
    drafts += g;
    if (g) p.verified(s, g, 0);
  }
  EXPECT_GE(drafts, 2);
  EXPECT_LE(drafts, 3);
}

TEST(DraftPolicy, ProbesOnlyWhileADraftModelsCatchUpIsCheap) {
  DraftPolicy p;
  teach(p, 0.010, 0.0005, 9);
  p.drafted(10, 0.001);
  for (int rows = 1; rows <= 200; rows += 7) p.first_pass(rows, 0.0003 + 0.0001 * rows);
  DraftPolicy::Seq near, far;
  accept(p, near, 30, 2, 0);
  accept(p, far, 30, 2, 0);
  int near_drafts = 0, far_drafts = 0;
  for (int64_t step = 0; step < 200; ++step) {
    near_drafts += p.choose(near, 8, 1, step, 4);   // a few tokens behind: 0.4 ms to catch up
    far_drafts += p.choose(far, 8, 1, step, 2000);  // far behind: 200 ms, more than it could save
  }
  EXPECT_GE(near_drafts, 3);
  EXPECT_EQ(far_drafts, 0);
}

}  // namespace
}  // namespace brisk
