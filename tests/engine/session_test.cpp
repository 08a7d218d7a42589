// The single-sequence session: a conversation fed whole each turn reuses the cached prefix, and
// gives the same logits as processing everything from scratch.
#include "engine/session.h"

#include "core/error.h"

#include <gtest/gtest.h>

#include "support/test_util.h"

namespace brisk {
namespace {

TEST(Session, ReusesTheCachedPrefix) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(2);
  const auto turn1 = m->tokenizer->encode("Once upon a time, there was a cat.", true);
  auto turn2 = turn1;
  for (int32_t t : m->tokenizer->encode(" The cat liked to play.", false)) turn2.push_back(t);

  Session chat(*m, pool, 256);
  chat.feed_conversation(turn1);
  const int64_t before = chat.stats().prompt_tokens;
  const float* l = chat.feed_conversation(turn2);
  EXPECT_EQ(chat.stats().prompt_tokens - before, static_cast<int64_t>(turn2.size() - turn1.size()));
  const std::vector<float> reused(l, l + m->hp.n_vocab);

  Session fresh(*m, pool, 256);
  const float* f = fresh.feed(turn2);
  EXPECT_EQ(reused, std::vector<float>(f, f + m->hp.n_vocab));  // bit-identical

  // A conversation that diverges early is recomputed from the divergence on.
  auto other = turn1;
  other[3] = 42;
  const float* o = chat.feed_conversation(other);
  Session fresh2(*m, pool, 256);
  const float* fo = fresh2.feed(other);
  EXPECT_EQ(std::vector<float>(o, o + m->hp.n_vocab), std::vector<float>(fo, fo + m->hp.n_vocab));
}

TEST(Session, StopsAtContextAndOnRequest) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  Session s(*m, pool, 20);
  SamplingParams sp;
  sp.temperature = 0;
  Sampler sampler(sp);
  s.feed(m->tokenizer->encode("Once", true));
  int n = 0;
  s.generate(sampler, -1, true, [&](int32_t) { return ++n < 1000; });
  EXPECT_LE(static_cast<int64_t>(s.tokens().size()), 20);
  EXPECT_GE(n, 17);
  std::atomic<bool> stop{true};
  Session s2(*m, pool, 64);
  s2.feed(m->tokenizer->encode("Once", true));
  n = 0;
  s2.generate(
      sampler, 10, true, [&](int32_t) { return ++n > 0; }, &stop);
  EXPECT_EQ(n, 0);
  EXPECT_THROW(s.feed(std::vector<int32_t>(40, 5)), Error);
}

}  // namespace
}  // namespace brisk
