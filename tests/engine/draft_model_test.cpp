// Speculative decoding with a separate draft model (the trained kjv pair in ../shared): greedy
// output unchanged token for token for 32 concurrent requests with mixed proposers and parallel
// completions, sampled output distributed as the target's (chi-square), and a draft whose
// vocabulary differs refused by name.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "core/error.h"
#include "engine/engine.h"
#include "support/test_util.h"

namespace brisk {
namespace {

struct Pair {
  std::unique_ptr<Model> target = Model::load(test::shared("models/kjv-pair/target.gguf"));
  std::unique_ptr<Model> draft = Model::load(test::shared("models/kjv-pair/draft.gguf"));
};
const Pair& pair() {
  static const Pair p;
  return p;
}

// Verse openings from the held-out text, as prompts.
std::vector<std::vector<int32_t>> prompts(const Model& m, size_t count) {
  std::istringstream in(test::read_file(test::shared("models/kjv-pair/valid.txt")));
  std::vector<std::vector<int32_t>> out;
  std::string line;
  while (out.size() < count && std::getline(in, line)) {
    if (line.size() < 40) continue;
    auto t = m.tokenizer->encode(line.substr(0, 20 + out.size() % 40), true);
    out.push_back(std::move(t));
  }
  return out;
}

using Texts = std::map<std::pair<RequestId, int>, std::vector<int32_t>>;

std::vector<std::vector<std::vector<int32_t>>> run(Engine& e, const std::vector<Request>& reqs) {
  Texts got;
  std::vector<RequestId> ids;
  for (const auto& r : reqs)
    ids.push_back(e.submit(r, [&got](const Output& o) {
      if (o.token >= 0) got[{o.id, o.index}].push_back(o.token);
    }));
  while (e.step()) e.check();
  EXPECT_EQ(e.stats().blocks_in_use, 0);
  std::vector<std::vector<std::vector<int32_t>>> out;
  for (size_t i = 0; i < reqs.size(); ++i) {
    out.emplace_back();
    for (int j = 0; j < reqs[i].n; ++j) out.back().push_back(got[{ids[i], j}]);
  }
  return out;
}

EngineConfig with_draft(int draft_max, bool adaptive) {
  EngineConfig c;
  c.spec.method = SpecMethod::DraftModel;
  c.spec.draft_model = pair().draft.get();
  c.spec.draft_max = draft_max;
  c.spec.adaptive = adaptive;
  return c;
}

TEST(DraftModel, GreedyOutputIsUnchangedForConcurrentRequestsWithMixedProposers) {
  const Model& m = *pair().target;
  ThreadPool pool(2);
  std::vector<Request> reqs;
  const auto ps = prompts(m, 32);
  for (size_t i = 0; i < ps.size(); ++i) {
    Request r;
    r.prompt = ps[i];
    r.sampling.temperature = 0;
    r.max_tokens = 24 + static_cast<int64_t>(i % 5) * 9;
    // Every fourth prompt lookup, every seventh no speculation, every ninth three completions.
    if (i % 4 == 1) r.proposer = SpecMethod::Ngram;
    if (i % 7 == 3) r.draft_max = 0;
    if (i % 9 == 2) r.n = 3;
    reqs.push_back(r);
  }
  Engine plain(m, pool, EngineConfig{});
  const auto want = run(plain, reqs);
  for (bool adaptive : {false, true}) {
    EngineConfig c = with_draft(5, adaptive);
    Engine e(m, pool, c);
    const auto got = run(e, reqs);
    for (size_t i = 0; i < reqs.size(); ++i)
      for (int j = 0; j < reqs[i].n; ++j)
        EXPECT_EQ(got[i][static_cast<size_t>(j)], want[i][0])
            << "request " << i << " completion " << j << (adaptive ? ", adaptive" : ", fixed");
    // (Adaptive, a batch this large is compute-bound and the policy may well draft nothing.)
    const EngineStats st = e.stats();
    if (!adaptive) {
      // The reference decoder's figures for this pair: 44% of drafted tokens at 3 per step, 23%
      // at 8 (prompt lookup, a quarter of the requests here, guesses worse on these prompts). A
      // draft cache out of step with the target's would fall far below.
      EXPECT_GT(static_cast<double>(st.spec_accepted_tokens),
                0.2 * static_cast<double>(st.spec_draft_tokens));
    }
  }
  // A request may not ask for a model proposer the engine has not loaded.
  Request bad = reqs[0];
  bad.proposer = SpecMethod::DraftModel;
  EXPECT_THROW(plain.submit(bad, [](const Output&) {}), Error);
}

// The second and third sampled tokens after a fixed prompt (the first verified positions: the first
// token comes with the prompt), drawn 3000 times with and without the draft model (temperature 1
// with top-k 8; drafts of 2, all that fit before max_tokens). Pairs seen fewer than 20 times in
// all are pooled into one cell. Critical value of chi-square at p = 1e-4 for the cells'
// degrees of freedom: a correct engine fails for fewer than 1 in 10,000 choices of seeds. The
// sanitizer build, there to check memory rather than statistics, draws 1000 times (it spent two
// minutes on 3000).
TEST(DraftModel, SampledTokensFollowTheTargetDistribution) {
#if defined(__SANITIZE_ADDRESS__)
  constexpr int kDraws = 1000;
#else
  constexpr int kDraws = 3000;
#endif
  const Model& m = *pair().target;
  ThreadPool pool(2);
  // Longer than two KV blocks, which every request after the first takes from the prefix cache.
  const auto prompt = m.tokenizer->encode(
      "And the LORD spake unto Moses, saying, Speak unto the children of Israel, and say unto "
      "them, When any man of you bring an offering unto the LORD,",
      true);
  auto draw = [&](EngineConfig c, uint64_t seed0) {
    c.max_seqs = 64;
    Engine e(m, pool, c);
    std::vector<Request> reqs;
    for (int i = 0; i < kDraws; ++i) {
      Request r;
      r.prompt = prompt;
      r.max_tokens = 4;
      r.ignore_eos = true;
      r.sampling.temperature = 1.0f;
      r.sampling.top_k = 8, r.sampling.top_p = 1.0f, r.sampling.min_p = 0;
      r.sampling.seed = seed0 + static_cast<uint64_t>(i);
      reqs.push_back(r);
    }
    std::map<std::pair<int32_t, int32_t>, int> counts;
    for (const auto& out : run(e, reqs)) counts[{out[0].at(1), out[0].at(2)}]++;
    return std::make_pair(counts, e.stats());
  };
  const auto [plain, plain_st] = draw(EngineConfig{}, 1);
  const auto [spec, spec_st] = draw(with_draft(3, false), 1000001);
  EXPECT_EQ(plain_st.spec_drafts, 0);
  EXPECT_GE(spec_st.spec_drafts, kDraws);
  EXPECT_GT(spec_st.spec_accepted_tokens, 0);
  std::map<std::pair<int32_t, int32_t>, std::pair<int, int>> cells;
  for (const auto& [k, v] : plain) cells[k].first += v;
  for (const auto& [k, v] : spec) cells[k].second += v;
  double chi2 = 0;
  int df = -1;
  std::pair<int, int> rest{0, 0};
  auto add = [&](double x, double y) {
    chi2 += (x - y) * (x - y) / (x + y);
    ++df;
  };
  for (const auto& [k, v] : cells) {
    if (v.first + v.second < 20) {
      rest.first += v.first, rest.second += v.second;
      continue;
    }
    add(v.first, v.second);
  }
  if (rest.first + rest.second > 0) add(rest.first, rest.second);
  ASSERT_GE(df, 5);
  // Wilson-Hilferty approximation of the chi-square quantile at 1 - 1e-4 (z = 3.719).
  const double z = 3.719, k = df;
  const double critical = k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
  EXPECT_LT(chi2, critical) << df << " degrees of freedom";
}

TEST(DraftModel, ADraftWithAnotherVocabularyIsRefused) {
  auto stories = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  EngineConfig c = with_draft(4, true);
  try {
    Engine e(*stories, pool, c);
    ADD_FAILURE() << "a draft with another vocabulary was accepted";
  } catch (const Error& err) {
    const std::string what = err.what();
    EXPECT_NE(what.find("draft.gguf"), std::string::npos) << what;
    EXPECT_NE(what.find("vocabulary"), std::string::npos) << what;
  }
  // Without a draft model the method cannot run.
  c.spec.draft_model = nullptr;
  EXPECT_THROW(Engine(*pair().target, pool, c), Error);
}

}  // namespace
}  // namespace brisk
