// The scheduler alone (no model): token budget, sequence limit, chunked prefill, admission order,
// preemption of the newest sequence when blocks run out, and stop strings held back.
#include <gtest/gtest.h>

#include <memory>

#include "engine/scheduler.h"
#include "engine/stop.h"

namespace brisk {
namespace {

struct Harness {
  BlockManager bm;
  Scheduler sched;
  std::vector<std::unique_ptr<SchedSeq>> seqs;
  Harness(int32_t blocks, int bs, int64_t budget, int max_seqs, int64_t prefill_cap = -1)
      : bm(blocks, bs, 1, true), sched(SchedulerConfig{budget, max_seqs, prefill_cap}, bm) {}
  SchedSeq* add(int prompt_len, int first_token = 0) {
    auto s = std::make_unique<SchedSeq>();
    s->id = static_cast<int32_t>(seqs.size());
    for (int i = 0; i < prompt_len; ++i) s->tokens.push_back(first_token + i);
    sched.add(s.get());
    seqs.push_back(std::move(s));
    return seqs.back().get();
  }
  // One step as the engine does it: schedule, "compute", append a token where logits came out.
  StepPlan step() {
    StepPlan p = sched.schedule();
    sched.computed(p);
    for (const auto& c : p.chunks)
      if (c.logits) c.seq->tokens.push_back(7);
    bm.check();
    return p;
  }
};

TEST(Scheduler, ChunksLongPromptsUnderTheTokenBudgetWhileOthersDecode) {
  Harness h(64, 16, 32, 8);
  SchedSeq* a = h.add(10);
  auto p = h.step();
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_TRUE(p.chunks[0].logits);
  SchedSeq* b = h.add(70, 100);
  // a decodes one token per step; b's prompt arrives in chunks of what the budget leaves.
  int64_t b_done = 0;
  int steps = 0;
  while (b->n_computed < 70) {
    p = h.step();
    ++steps;
    EXPECT_LE(p.n_tokens(), 32);
    ASSERT_GE(p.chunks.size(), 1u);
    EXPECT_EQ(p.chunks[0].seq, a);  // admitted first, scheduled first
    EXPECT_EQ(p.chunks[0].count, 1);
    ASSERT_EQ(p.chunks.size(), 2u);
    EXPECT_EQ(p.chunks[1].start, b_done);
    EXPECT_EQ(p.chunks[1].logits, b->n_computed == 70);
    b_done = b->n_computed;
  }
  EXPECT_EQ(steps, 3);  // 31 + 31 + 8
  EXPECT_EQ(b->tokens.size(), 71u);
}

// Decode tokens go first, even before an older sequence's prompt chunk, and while sequences decode
// a step takes at most max(decode tokens, 32) prompt tokens unless configured otherwise.
TEST(Scheduler, DecodesFirstAndCapsPromptTokensWhileDecoding) {
  for (int64_t cap : {-1, 0, 8}) {
    Harness h(256, 16, 512, 8, cap);
    std::vector<SchedSeq*> dec;
    for (int i = 0; i < 3; ++i) dec.push_back(h.add(4, 10 * i));
    h.step();  // three short prompts prefilled together: all decode from now on
    SchedSeq* big = h.add(1000, 500);
    auto p = h.step();
    ASSERT_EQ(p.chunks.size(), 4u);
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(p.chunks[i].seq, dec[i]);
      EXPECT_EQ(p.chunks[i].count, 1);
    }
    const int64_t want = cap == -1 ? kMinPrefillWhileDecoding : cap == 0 ? 509 : cap;
    EXPECT_EQ(p.chunks[3].seq, big);
    EXPECT_EQ(p.chunks[3].count, want) << "cap " << cap;
    // The older prompt still being prefilled comes after the decodes.
    SchedSeq* late = h.add(3, 900);
    p = h.step();
    ASSERT_GE(p.chunks.size(), 4u);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(p.chunks[i].count, 1);
    EXPECT_EQ(p.chunks[3].seq, big);
    EXPECT_EQ(p.chunks[3].start, want);
    if (cap == 0) {
      EXPECT_EQ(p.chunks.back().seq, late);
    }
  }
}

TEST(Scheduler, RespectsTheSequenceLimitAndArrivalOrder) {
  Harness h(64, 16, 512, 2);
  SchedSeq* a = h.add(5);
  SchedSeq* b = h.add(5, 10);
  SchedSeq* c = h.add(5, 20);
  auto p = h.step();
  ASSERT_EQ(p.chunks.size(), 2u);
  EXPECT_EQ(p.chunks[0].seq, a);
  EXPECT_EQ(p.chunks[1].seq, b);
  EXPECT_EQ(h.sched.n_waiting(), 1u);
  h.sched.remove(a);
  p = h.step();
  ASSERT_EQ(p.chunks.size(), 2u);
  EXPECT_EQ(p.chunks[1].seq, c);
  h.sched.remove(b);
  h.sched.remove(c);
  EXPECT_TRUE(h.sched.idle());
  h.bm.check();
  EXPECT_EQ(h.bm.pool().n_in_use(), 0);
}

TEST(Scheduler, PreemptsTheNewestSequenceWhenBlocksRunOut) {
  // 6 blocks of 4 tokens; three sequences of 8 tokens (2 blocks each) fill the pool; the first
  // decode step that needs a new block preempts the newest, which later resumes from scratch.
  Harness h(6, 4, 512, 8);
  SchedSeq* a = h.add(8);
  SchedSeq* b = h.add(8, 100);
  SchedSeq* c = h.add(8, 200);
  h.step();  // all three prefilled: tokens now 9 each, computed 8
  EXPECT_EQ(h.bm.pool().n_available(), 0);
  auto p = h.step();  // a's 9th token needs a third block: c (newest) is preempted
  ASSERT_EQ(p.preempted.size(), 1u);
  EXPECT_EQ(p.preempted[0], c);
  EXPECT_EQ(c->n_computed, 0);
  EXPECT_EQ(c->n_preempted, 1);
  EXPECT_EQ(h.sched.n_waiting(), 1u);
  ASSERT_EQ(p.chunks.size(), 2u);
  EXPECT_EQ(p.chunks[0].seq, a);
  EXPECT_EQ(p.chunks[1].seq, b);
  // When a finishes, c is readmitted and recomputes its 9 known tokens in one chunk.
  h.sched.remove(a);
  p = h.step();
  ASSERT_EQ(p.chunks.size(), 2u);
  EXPECT_EQ(p.chunks[1].seq, c);
  EXPECT_EQ(p.chunks[1].count, 9);
  EXPECT_TRUE(p.chunks[1].logits);
  EXPECT_EQ(h.sched.n_preemptions(), 1);
}

TEST(Scheduler, AdmissionTakesCachedPrefixBlocks) {
  Harness h(32, 4, 512, 8);
  SchedSeq* a = h.add(13);
  h.step();
  h.sched.remove(a);
  SchedSeq* b = h.add(13);  // same prompt
  auto p = h.step();
  ASSERT_EQ(p.chunks.size(), 1u);
  EXPECT_EQ(p.chunks[0].start, 12);  // three cached blocks; only the last token is computed
  EXPECT_EQ(p.chunks[0].count, 1);
  EXPECT_EQ(h.bm.cache_hits(), 12);
  EXPECT_EQ(h.bm.cache_queries(), 26);
  h.sched.remove(b);
}

TEST(StopMatcher, HoldsBackPossibleStopStringsAndCutsAtTheFirst) {
  StopMatcher m({"END", "\n\n"});
  bool stopped = false;
  EXPECT_EQ(m.push("Hello E", stopped), "Hello ");  // "E" may start "END"
  EXPECT_FALSE(stopped);
  EXPECT_EQ(m.push("x", stopped), "Ex");
  EXPECT_EQ(m.push("a\n", stopped), "a");
  EXPECT_EQ(m.push("\nmore", stopped), "");
  EXPECT_TRUE(stopped);

  StopMatcher m2({"stop here"});
  EXPECT_EQ(m2.push("we stop", stopped), "we ");
  EXPECT_EQ(m2.push(" now", stopped), "stop now");
  EXPECT_EQ(m2.push(" stop h", stopped), " ");
  EXPECT_EQ(m2.flush(), "stop h");  // generation ended for another reason: nothing is lost

  StopMatcher none;
  EXPECT_EQ(none.push("abc", stopped), "abc");
  StopMatcher split({"ab", "xbc"});
  EXPECT_EQ(split.push("zxbcab", stopped), "z");  // the earliest occurrence wins
  EXPECT_TRUE(stopped);
}

}  // namespace
}  // namespace brisk
