// The engine's promise: a request's greedy output does not depend on what runs beside it — alone
// or among 64 mixed-length requests, with prefix caching on or off, with a KV pool so small that
// sequences are preempted and recomputed, with any prefill chunk size — and no KV block is ever
// leaked or freed twice. Plus n > 1 completions (copy-on-write), abort, stops, rejections, and
// submission from another thread.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "core/error.h"
#include "engine/engine.h"
#include "engine_runs.h"
#include "model_gen.h"
#include "support/test_util.h"

namespace brisk {
namespace {

// 64 requests of mixed lengths; a third of them share a long common prefix (a "system prompt"),
// some repeat another's prompt exactly.
std::vector<Request> mixed_requests(const Model& m, int count, int max_prompt) {
  const std::string story =
      "Once upon a time, there was a little girl named Lily. She loved to play outside in the "
      "park with her friends. One day, she saw a big red ball under a tree. Lily wanted to play "
      "with the ball, but it was too high. She asked her mom for help. Her mom smiled and said "
      "they could get it together. They found a long stick and poked the ball until it fell. "
      "Lily was so happy that she hugged her mom and they played all day long.";
  const auto all = m.tokenizer->encode(story, true);
  std::vector<Request> v;
  uint64_t x = 12345;
  auto rnd = [&x](uint64_t n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % n;
  };
  for (int i = 0; i < count; ++i) {
    std::vector<int32_t> p;
    const int len = 1 + static_cast<int>(rnd(static_cast<uint64_t>(max_prompt)));
    if (i % 3 == 0) {
      p.assign(all.begin(), all.begin() + std::min<size_t>(all.size(), 40));  // shared prefix
      for (int j = 0; j < len / 4; ++j) p.push_back(static_cast<int32_t>(3 + rnd(250)));
    } else if (i % 7 == 1 && i > 7) {
      p = v[static_cast<size_t>(i - 7)].prompt;  // an exact repeat
    } else {
      const size_t start = rnd(all.size() / 2);
      p.push_back(all[0]);
      for (int j = 0; j < len && start + static_cast<size_t>(j) < all.size(); ++j)
        p.push_back(all[start + static_cast<size_t>(j)]);
    }
    v.push_back(greedy(p, 4 + static_cast<int64_t>(rnd(40))));
  }
  return v;
}

std::vector<std::vector<Result>> run_alone(const Model& m, ThreadPool& pool,
                                           const std::vector<Request>& reqs, KvType type) {
  EngineConfig c;
  c.kv_type = type;
  c.prefix_caching = false;
  c.max_seqs = 1;
  Engine e(m, pool, c);
  std::vector<std::vector<Result>> out;
  for (const auto& r : reqs) out.push_back(run_all(e, {r})[0]);
  return out;
}

void expect_same(const std::vector<std::vector<Result>>& a,
                 const std::vector<std::vector<Result>>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size());
    for (size_t j = 0; j < a[i].size(); ++j) {
      EXPECT_EQ(a[i][j].tokens, b[i][j].tokens) << what << ": request " << i;
      EXPECT_EQ(a[i][j].text, b[i][j].text) << what << ": request " << i;
      EXPECT_EQ(a[i][j].finish, b[i][j].finish) << what << ": request " << i;
    }
  }
}

// Runs the requests in one batch under many engine settings and compares with running each alone.
// With a draft model, speculation by it runs under the same settings; `draft_is_target`: the draft
// has the target's weights, so a draft cache kept exactly in step proposes what the target picks.
void expect_batch_invariance(const Model& m, KvType type, int n_requests, int max_prompt,
                             const Model* draft = nullptr, bool draft_is_target = false) {
  ThreadPool pool(2);
  const auto reqs = mixed_requests(m, n_requests, max_prompt);
  const auto alone = run_alone(m, pool, reqs, type);
  struct Setting {
    const char* name;
    bool caching;
    int64_t budget;  // max batched tokens: the prefill chunk size
    int kv_blocks;   // 0: default pool
    int draft = 0;   // speculative tokens per step, 0: off
    SpecMethod spec = SpecMethod::Ngram;
  };
  for (const Setting& s :
       {Setting{"batched, prefix caching", true, 512, 0},
        Setting{"batched, no prefix caching", false, 512, 0}, Setting{"chunks of 1", true, 1, 0},
        Setting{"chunks of 7", true, 7, 0}, Setting{"chunks of 64", false, 64, 0},
        Setting{"tiny pool (preemption)", true, 96, 24},
        Setting{"tiny pool, no caching", false, 512, 20}, Setting{"prompt lookup", true, 512, 0, 8},
        Setting{"prompt lookup, chunks of 5", true, 5, 0, 8},
        Setting{"prompt lookup, tiny pool", true, 96, 24, 4},
        Setting{"prompt lookup, no caching", false, 512, 0, 3},
        Setting{"layer skip", true, 512, 0, 4, SpecMethod::LayerSkip},
        Setting{"layer skip, tiny pool", true, 96, 24, 3, SpecMethod::LayerSkip},
        Setting{"draft model", true, 512, 0, 4, SpecMethod::DraftModel},
        Setting{"draft model, chunks of 5", true, 5, 0, 3, SpecMethod::DraftModel},
        Setting{"draft model, tiny pool", true, 96, 24, 5, SpecMethod::DraftModel},
        Setting{"draft model, no caching", false, 512, 0, 2, SpecMethod::DraftModel}}) {
    if (s.spec == SpecMethod::DraftModel && !draft) continue;
    EngineConfig c;
    c.kv_type = type;
    c.prefix_caching = s.caching;
    c.max_batched_tokens = s.budget;
    c.max_seqs = 64;
    if (s.draft) {
      c.spec.method = s.spec;
      c.spec.draft_model = draft;
      c.spec.draft_max = s.draft;
      c.spec.adaptive = false;  // speculate in every batch, however large
    }
    // (With a draft model, a block holds its positions in both caches.)
    if (s.kv_blocks) c.kv_cache_bytes = kv_bytes_for_tokens(m, c, int64_t{16} * s.kv_blocks);
    Engine e(m, pool, c);
    expect_same(alone, run_all(e, reqs), s.name);
    const auto st = e.stats();
    if (s.draft) {
      EXPECT_GT(st.spec_drafts, 0) << s.name;
      if (s.spec == SpecMethod::Ngram) {
        EXPECT_GT(st.spec_accepted_tokens, 0) << s.name;
      }
      if (s.spec == SpecMethod::DraftModel && draft_is_target) {
        // Only drafts cut short by an end of text lose tokens.
        EXPECT_GT(static_cast<double>(st.spec_accepted_tokens),
                  0.97 * static_cast<double>(st.spec_draft_tokens))
            << s.name;
      } else {
        EXPECT_LT(st.spec_accepted_tokens, st.spec_draft_tokens) << s.name;
      }
    }
    if (s.kv_blocks) {
      EXPECT_GT(st.preemptions, 0) << s.name;
    }
    if (s.caching) {
      EXPECT_GT(st.cache_hits, 0) << s.name;
    } else {
      EXPECT_EQ(st.cache_hits, 0) << s.name;
    }
  }
}

TEST(Engine, StoriesGreedyOutputIsTheSameAloneOrInAnyBatch) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  // Its own weights as the draft model: every draft token is accepted only if the draft's cache
  // (a second cache over the same block tables) is exact through prefix caching, chunked prompts,
  // forks and preemption.
  auto draft = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  expect_batch_invariance(*m, KvType::F16, 64, 120, draft.get(), true);
}

TEST(Engine, Q8KvCacheOutputIsTheSameAloneOrInAnyBatch) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  expect_batch_invariance(*m, KvType::Q8, 24, 100);
}

TEST(Engine, RandomWeightGqaModelOutputIsTheSameAloneOrInAnyBatch) {
  tools::GenConfig g;
  g.n_vocab = 300, g.n_embd = 128, g.n_layer = 2, g.n_ff = 200, g.n_head = 4, g.n_head_kv = 2;
  g.type = DType::F16;
  test::TempDir dir;
  tools::write_random_model(g, dir.file("m.gguf"));
  auto m = Model::load(dir.file("m.gguf"));
  // A smaller random model with the same vocabulary drafts: its guesses are mostly rejected.
  g.n_embd = 64, g.n_layer = 1, g.n_ff = 96, g.n_head = 2, g.n_head_kv = 1, g.seed = 2;
  tools::write_random_model(g, dir.file("d.gguf"));
  auto d = Model::load(dir.file("d.gguf"));
  expect_batch_invariance(*m, KvType::BF16, 20, 60, d.get());
}

TEST(Engine, ReproducesTheStoriesReferenceText) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(2);
  for (KvType t : {KvType::F32, KvType::F16}) {
    EngineConfig c;
    c.kv_type = t;
    Engine e(m.operator*(), pool, c);
    const auto prompt = m->tokenizer->encode("Once upon a time", true);
    // llama2.c's 64 steps include BOS and the prompt.
    const auto r = run_all(e, {greedy(prompt, 64 - static_cast<int64_t>(prompt.size()) + 1)});
    EXPECT_EQ("Once upon a time" + r[0][0].text + "\n",
              test::read_file(
                  test::shared("models/stories260K/expected_greedy_once_upon_a_time_n64.txt")))
        << kv_type_name(t);
  }
}

TEST(Engine, ParallelCompletionsShareThePromptAndCopyOnWrite) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(2);
  const auto prompt = m->tokenizer->encode("The cat sat on the mat and looked at the dog", true);
  EngineConfig c;
  Engine e(*m, pool, c);
  // Greedy: every completion equals the single greedy completion.
  Request r = greedy(prompt, 30);
  const auto single = run_all(e, {r});
  r.n = 4;
  const auto four = run_all(e, {r});
  ASSERT_EQ(four[0].size(), 4u);
  for (const auto& x : four[0]) EXPECT_EQ(x.tokens, single[0][0].tokens);
  // Sampled: completions differ from each other, and the same seed reproduces all of them.
  Request s = greedy(prompt, 30);
  s.n = 3;
  s.sampling.temperature = 1.0f;
  s.sampling.top_k = 0, s.sampling.top_p = 1, s.sampling.min_p = 0;
  s.sampling.seed = 7;
  const auto a = run_all(e, {s});
  const auto b = run_all(e, {s, s});  // even beside a copy of itself
  EXPECT_NE(a[0][0].tokens, a[0][1].tokens);
  expect_same(a, {b[0]}, "seeded n=3");
  expect_same(a, {b[1]}, "seeded n=3 beside itself");
}

TEST(Engine, StopsOnStopStringsTokensAndLength) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  Engine e(*m, pool, EngineConfig{});
  const auto prompt = m->tokenizer->encode("Once upon a time", true);
  const auto full = run_all(e, {greedy(prompt, 40)})[0][0];
  ASSERT_EQ(full.finish, FinishReason::Length);
  ASSERT_EQ(full.tokens.size(), 40u);
  // A stop string in the middle of the text: everything before it, nothing from it on.
  const size_t at = full.text.find("Lily");
  ASSERT_NE(at, std::string::npos) << full.text;
  Request r = greedy(prompt, 40);
  r.stop = {"zzz", "Lily"};
  const auto stopped = run_all(e, {r})[0][0];
  EXPECT_EQ(stopped.finish, FinishReason::Stop);
  EXPECT_EQ(stopped.text, full.text.substr(0, at));
  // A stop token id: generation ends at that token.
  Request t = greedy(prompt, 40);
  t.stop_token_ids = {full.tokens[5]};
  const auto tstop = run_all(e, {t})[0][0];
  EXPECT_EQ(tstop.finish, FinishReason::Stop);
  EXPECT_EQ(tstop.tokens.size(), 6u);
}

TEST(Engine, AbortFreesEverythingAndLeavesOthersAlone) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(2);
  Engine e(*m, pool, EngineConfig{});
  const auto prompt = m->tokenizer->encode("Once upon a time", true);
  const auto expect = run_all(e, {greedy(prompt, 30)})[0][0];
  Result keep, gone;
  const RequestId a = e.submit(greedy(prompt, 30), [&](const Output& o) {
    if (o.token >= 0) keep.tokens.push_back(o.token);
    keep.finish = o.finish;
  });
  Request big = greedy(prompt, 100);
  big.n = 3;
  const RequestId b = e.submit(big, [&](const Output& o) {
    if (o.token >= 0) gone.tokens.push_back(o.token);
    if (o.finish != FinishReason::None) gone.finish = o.finish;
  });
  for (int i = 0; i < 5; ++i) e.step();
  e.abort(b);
  e.abort(b);       // twice: harmless
  e.abort(999999);  // unknown: harmless
  while (e.step()) e.check();
  EXPECT_NE(a, b);
  EXPECT_EQ(gone.finish, FinishReason::Abort);
  EXPECT_LT(gone.tokens.size(), 300u);
  EXPECT_EQ(keep.tokens, expect.tokens);
  EXPECT_EQ(e.stats().blocks_in_use, 0);
  e.check();
}

TEST(Engine, RejectsRequestsThatCouldNeverRun) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  EngineConfig c;
  c.kv_cache_bytes = kv_bytes_for_tokens(*m, c, 64);  // 4 blocks
  Engine e(*m, pool, c);
  EXPECT_EQ(e.max_model_len(), 64);
  // Each refusal names the field at fault (limits.h), as the server passes it on.
  auto expect_error = [&](Request r, const std::string& field, const std::string& part) {
    try {
      e.submit(std::move(r), [](const Output&) {});
      ADD_FAILURE() << "accepted: " << part;
    } catch (const RequestError& err) {
      EXPECT_EQ(err.field, field) << err.what();
      EXPECT_NE(std::string(err.what()).find(part), std::string::npos) << err.what();
    }
  };
  expect_error(greedy({}, 5), "prompt", "empty");
  expect_error(greedy(std::vector<int32_t>(64, 5), 5), "prompt", "your prompt has 64 tokens");
  expect_error(greedy(std::vector<int32_t>(40, 5), 30), "max_tokens", "you requested 70 tokens");
  expect_error(greedy({1, 100000}, 5), "prompt", "outside the vocabulary");
  Request r = greedy({1, 2}, 5);
  r.n = 0;
  expect_error(r, "n", "n = 0");
  r = greedy({1, 2}, 5);
  r.logprobs = kMaxLogprobs + 1;
  expect_error(r, "logprobs", "at most 20");
  r = greedy({1, 2}, 5);
  r.stop_token_ids = {-1};
  expect_error(r, "stop_token_ids", "outside the vocabulary");
  EXPECT_TRUE(e.idle());
  // Without max_tokens a request runs until the context is full.
  const auto res = run_all(e, {greedy({1, 2}, -1)});
  EXPECT_EQ(res[0][0].finish == FinishReason::Length ? res[0][0].tokens.size() : 62u, 62u);
}

TEST(Engine, AcceptsSubmissionsFromAnotherThreadWhileStepping) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  Engine e(*m, pool, EngineConfig{});
  const auto reqs = mixed_requests(*m, 16, 40);
  const auto alone = run_alone(*m, pool, reqs, KvType::F16);
  std::mutex mu;
  Results res;
  std::vector<RequestId> ids(reqs.size());
  std::atomic<bool> submitted{false};
  std::thread producer([&] {
    for (size_t i = 0; i < reqs.size(); ++i) {
      ids[i] = e.submit(reqs[i], [&](const Output& o) {
        std::lock_guard lk(mu);
        auto& x = res[{o.id, o.index}];
        if (o.token >= 0) x.tokens.push_back(o.token);
        x.finish = o.finish;
      });
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    submitted = true;
  });
  while (!submitted || !e.idle()) e.step();
  producer.join();
  for (size_t i = 0; i < reqs.size(); ++i)
    EXPECT_EQ((res[{ids[i], 0}].tokens), alone[i][0].tokens) << i;
  e.check();
}

}  // namespace
}  // namespace brisk
