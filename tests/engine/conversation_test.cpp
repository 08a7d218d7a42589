// A conversation run as one request per turn (what brisk chat does): each turn's prompt is the
// whole conversation, the prefix cache supplies what earlier turns computed, and the output is
// the same as computing everything from scratch.
#include <gtest/gtest.h>

#include "core/error.h"
#include "engine/engine.h"
#include "engine_runs.h"
#include "support/test_util.h"

namespace brisk {
namespace {

struct Turn {
  std::vector<int32_t> tokens;
  int64_t cached = 0;
  FinishReason finish = FinishReason::None;
};

// One request run to its end; `abort` ends it right after submission, before any step.
Turn greedy_turn(Engine& e, std::vector<int32_t> prompt, int64_t max_tokens, bool abort = false) {
  Request r = greedy(std::move(prompt), max_tokens);
  r.ignore_eos = true;
  Turn t;
  const RequestId id = e.submit(std::move(r), [&](const Output& o) {
    if (o.token >= 0) t.tokens.push_back(o.token);
    t.cached = o.cached_tokens;
    t.finish = o.finish;
  });
  if (abort) e.abort(id);
  e.run_until_idle();
  return t;
}

TEST(Conversation, LaterTurnsReuseTheCachedPrefixAndMatchAFreshRun) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(2);
  EngineConfig c;
  c.max_seqs = 1;
  c.max_model_len = 256;
  Engine chat(*m, pool, c);
  auto conv = m->tokenizer->encode("Once upon a time, there was a cat.", true);
  const auto n_prompt1 = static_cast<int64_t>(conv.size());
  const Turn t1 = greedy_turn(chat, conv, 30);
  EXPECT_EQ(t1.cached, 0);
  conv.insert(conv.end(), t1.tokens.begin(), t1.tokens.end());
  for (int32_t t : m->tokenizer->encode(" The cat liked to play.", false)) conv.push_back(t);
  const Turn t2 = greedy_turn(chat, conv, 30);
  // Turn 1 computed its prompt and all but its last reply token; every full block of that was
  // published and is found again.
  const int64_t computed1 = n_prompt1 + 30 - 1;
  EXPECT_EQ(t2.cached, computed1 / c.block_size * c.block_size);
  EXPECT_GT(t2.cached, 0);

  c.prefix_caching = false;
  Engine fresh(*m, pool, c);
  EXPECT_EQ(greedy_turn(fresh, conv, 30).tokens, t2.tokens);

  // /reset: nothing is reused after the cache is cleared.
  chat.clear_prefix_cache();
  EXPECT_EQ(greedy_turn(chat, conv, 4).cached, 0);
  chat.check();
}

TEST(Conversation, StopsAtTheModelLengthAndOnAbort) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  EngineConfig c;
  c.max_seqs = 1;
  c.max_model_len = 20;
  Engine e(*m, pool, c);
  const Turn t = greedy_turn(e, m->tokenizer->encode("Once", true), -1);
  EXPECT_EQ(static_cast<int64_t>(t.tokens.size()), 20 - 2);  // BOS + "Once" + 18 = 20
  EXPECT_THROW(greedy_turn(e, std::vector<int32_t>(40, 5), 1), Error);

  const Turn aborted = greedy_turn(e, m->tokenizer->encode("Once", true), 10, true);
  EXPECT_TRUE(aborted.tokens.empty());
  EXPECT_EQ(aborted.finish, FinishReason::Abort);
  EXPECT_EQ(e.stats().blocks_in_use, 0);
}

}  // namespace
}  // namespace brisk
