// Structured output through the engine: constrained requests at temperature 1 (many seeds, every
// sampling cut, n > 1) batched with free ones, under prefix caching, preemption, each kind of
// speculation and jump-forward. Every output that finished is checked by python3-jsonschema (and
// Python's re) in tests/engine/validate_outputs.py, and every output, finished or cut by length,
// is a prefix the constraint allows. Greedy outputs, constrained or not, are the same in every
// setting. Plus refusals naming the keyword, logprobs over the allowed tokens, and a model whose
// vocabulary is TinyLlama's size.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "engine/engine.h"
#include "engine/structured_output.h"
#include "engine_runs.h"
#include "grammar/matcher.h"
#include "model_gen.h"
#include "support/test_util.h"

namespace brisk {
namespace {

using json = nlohmann::ordered_json;
using Kind = grammar::Constraint::Kind;

// A constraint and what the Python checker needs to judge its outputs.
struct Check {
  grammar::Constraint c;
  json meta;
  bool bounded = true;  // its texts have a greatest length
};

// Non-compact JSON allows a few whitespace characters between tokens here: this small model
// favours whitespace, and the default 20 would make its outputs mostly padding.
Check schema(const std::string& text, bool compact = false) {
  Check k;
  k.c.kind = Kind::JsonSchema;
  k.c.text = text;
  k.c.style.compact = compact;
  k.c.style.max_whitespace = 3;
  k.meta = {{"kind", "json_schema"}, {"schema", json::parse(text)}};
  return k;
}

// Schemas as applications send them, each with a bounded output (so most runs finish), and the
// other kinds of constraint.
std::vector<Check> checks() {
  std::vector<Check> v;
  const std::string person =
      R"({"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":120},"kind":{"enum":["cat","dog","bird"]},"tags":{"type":"array","items":{"type":"string","maxLength":8},"maxItems":3}},"required":["name","age","kind"],"additionalProperties":false})";
  v.push_back(schema(person));
  v.push_back(schema(person, true));
  v.push_back(schema(
      R"({"type":"object","properties":{"id":{"type":"string","format":"uuid"},"when":{"type":"string","format":"date"},"ok":{"type":"boolean"},"score":{"type":"number","minimum":-5,"maximum":5},"note":{"anyOf":[{"type":"null"},{"type":"string","maxLength":6}]}},"required":["id","when","ok"],"additionalProperties":false})"));
  v.push_back(schema(
      R"({"type":"array","items":{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{2}$"},"n":{"type":"integer","exclusiveMinimum":0,"maximum":99}},"required":["code","n"],"additionalProperties":false},"minItems":1,"maxItems":3})",
      true));
  v.push_back(schema(
      R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"integer","minimum":1,"maximum":9}},"required":["kind","r"],"additionalProperties":false},{"type":"object","properties":{"kind":{"const":"rect"},"w":{"type":"integer","minimum":1,"maximum":9},"h":{"type":"integer","minimum":1,"maximum":9}},"required":["kind","w","h"],"additionalProperties":false}]})"));
  v.push_back(schema(
      R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer","minimum":0,"maximum":9},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["v"],"additionalProperties":false}},"$ref":"#/$defs/node"})",
      true));
  v.push_back(schema(
      R"({"type":"object","properties":{"ip":{"type":"string","format":"ipv4"},"day":{"type":"string","format":"date"}},"required":["ip","day"],"additionalProperties":false})",
      true));
  Check re;
  re.c.kind = Kind::Regex;
  re.c.text = "(yes|no), [0-9]{1,3}!";
  re.meta = {{"kind", "regex"}, {"pattern", re.c.text}};
  v.push_back(re);
  Check choice;
  choice.c.kind = Kind::Choice;
  choice.c.choices = {"red", "green", "blue sky"};
  choice.meta = {{"kind", "choice"}, {"choices", choice.c.choices}};
  v.push_back(choice);
  Check gbnf;
  gbnf.c.kind = Kind::Gbnf;
  gbnf.c.text = "root ::= \"(\" [a-z] [a-z]? [a-z]? \")\" | \"none\"\n";
  gbnf.meta = {{"kind", "regex"}, {"pattern", "\\([a-z]{1,3}\\)|none"}};
  v.push_back(gbnf);
  Check obj;
  obj.c.kind = Kind::JsonObject;
  obj.c.style.compact = true;
  obj.meta = {{"kind", "json_object"}};
  obj.bounded = false;
  v.push_back(obj);
  return v;
}

struct Workload {
  std::vector<Request> reqs;
  std::vector<int> check;  // per request: its constraint in checks(), -1 for a free one
};

// Constrained requests under each sampling cut (and greedy), some with n = 3, between free
// greedy ones.
Workload workload(const Model& m, const std::vector<Check>& cs, int per_check, int64_t max_tokens) {
  const char* prompts[] = {"Once upon a time", "Tom had a big red ball.", "The cat",
                           "Lily and Ben went to the park. They saw"};
  struct Cut {
    float temperature;
    int top_k;
    float top_p, min_p;
  };
  const Cut cuts[] = {{1.0f, 0, 1.0f, 0.0f}, {1.0f, 40, 0.95f, 0.05f}, {1.2f, 5, 1.0f, 0.0f},
                      {1.0f, 0, 1.0f, 0.1f}, {1.0f, 0, 0.8f, 0.0f},    {0.0f, 0, 1.0f, 0.0f}};
  Workload w;
  uint64_t seed = 1;
  for (size_t i = 0; i < cs.size(); ++i)
    for (int j = 0; j < per_check; ++j) {
      Request r;
      r.prompt = m.tokenizer->encode(prompts[(i + static_cast<size_t>(j)) % 4], true);
      const Cut& cut = cuts[(i + static_cast<size_t>(j)) % 6];
      r.sampling.temperature = cut.temperature, r.sampling.top_k = cut.top_k;
      r.sampling.top_p = cut.top_p, r.sampling.min_p = cut.min_p;
      r.sampling.seed = seed++;
      r.n = cut.temperature > 0 && j % 3 == 0 ? 3 : 1;
      r.max_tokens = max_tokens;
      r.constraint = cs[i].c;
      w.reqs.push_back(r);
      w.check.push_back(static_cast<int>(i));
      if (j % 2 == 0) {
        Request f;
        f.prompt = m.tokenizer->encode(prompts[static_cast<size_t>(j) % 4], true);
        f.sampling.temperature = 0;
        f.max_tokens = 24;
        w.reqs.push_back(f);
        w.check.push_back(-1);
      }
    }
  return w;
}

// The constraint compiled on its own against a model's vocabulary, for replaying outputs.
std::shared_ptr<const grammar::CompiledGrammar> compiled(const grammar::Constraint& c,
                                                         const Tokenizer& tok) {
  return std::make_shared<grammar::CompiledGrammar>(
      grammar::constraint_grammar(c),
      std::make_shared<grammar::TokenTrie>(grammar::TokenTrie::from_tokenizer(tok)));
}

struct Verdicts {
  int finished = 0, cut = 0;  // of bounded constraints
};

// Replays each constrained completion through a fresh matcher (every token allowed; a finished
// one complete) and appends the finished ones to the JSONL the Python checker reads.
Verdicts judge(Engine& e, const Workload& w, const std::vector<std::vector<Result>>& res,
               const std::vector<Check>& cs, std::string& jsonl) {
  Verdicts v;
  for (size_t i = 0; i < w.reqs.size(); ++i) {
    if (w.check[i] < 0) continue;
    const Check& c = cs[static_cast<size_t>(w.check[i])];
    const auto g = compiled(c.c, *e.model().tokenizer);
    for (const Result& r : res[i]) {
      grammar::Matcher m(g);
      for (int32_t t : r.tokens) EXPECT_TRUE(m.accept(t)) << "token " << t << " in " << r.text;
      if (r.finish == FinishReason::Length) {
        v.cut += c.bounded;
        continue;
      }
      EXPECT_EQ(r.finish, FinishReason::Stop);
      EXPECT_TRUE(m.ended() || m.can_end()) << r.text;
      v.finished += c.bounded;
      json line = c.meta;
      line["text"] = r.text;
      jsonl += line.dump() + "\n";
    }
  }
  return v;
}

void validate_with_python(const std::string& jsonl) {
  test::TempDir dir;
  test::write_file(dir.file("outputs.jsonl"), jsonl);
  const std::string cmd =
      "python3 tests/engine/validate_outputs.py " + dir.file("outputs.jsonl") + " >&2";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "python3-jsonschema found invalid outputs (above)";
}

struct Setting {
  const char* name;
  int kv_blocks = 0;  // 0: default pool
  int64_t budget = 512;
  SpecMethod spec = SpecMethod::None;
  int draft = 0;
  bool jump_forward = true;
};

// Greedy completions (constrained or free) by request, for comparing settings.
std::vector<std::vector<int32_t>> greedy_outputs(const Workload& w,
                                                 const std::vector<std::vector<Result>>& res) {
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < w.reqs.size(); ++i)
    out.push_back(w.reqs[i].sampling.temperature <= 0 ? res[i][0].tokens : std::vector<int32_t>{});
  return out;
}

void run_settings(const Model& m, const Model* draft, const std::vector<Setting>& settings,
                  int per_check, int64_t max_tokens) {
  ThreadPool pool(2);
  const auto cs = checks();
  const Workload w = workload(m, cs, per_check, max_tokens);
  std::string jsonl;
  std::vector<std::vector<int32_t>> greedy0;
  Verdicts total;
  for (const Setting& s : settings) {
    EngineConfig c;
    c.max_batched_tokens = s.budget;
    c.jump_forward = s.jump_forward;
    if (s.draft) {
      c.spec.method = s.spec;
      c.spec.draft_model = draft;
      c.spec.draft_max = s.draft;
      c.spec.adaptive = false;
    }
    if (s.kv_blocks) c.kv_cache_bytes = kv_bytes_for_tokens(m, c, int64_t{16} * s.kv_blocks);
    Engine e(m, pool, c);
    const auto res = run_all(e, w.reqs);
    const Verdicts v = judge(e, w, res, cs, jsonl);
    total.finished += v.finished, total.cut += v.cut;
    const auto st = e.stats();
    EXPECT_TRUE(!s.kv_blocks || st.preemptions > 0) << s.name;
    EXPECT_TRUE(!s.draft || st.spec_draft_tokens > 0) << s.name;
    EXPECT_EQ(st.forced_tokens > 0, s.jump_forward) << s.name;
    // Jump-forward may split forced text into other tokens than sampling would: greedy outputs
    // are compared among the settings that use it.
    if (!s.jump_forward) continue;
    const auto greedy = greedy_outputs(w, res);
    if (greedy0.empty()) greedy0 = greedy;
    for (size_t i = 0; i < greedy.size(); ++i)
      EXPECT_EQ(greedy[i], greedy0[i]) << s.name << ": greedy request " << i;
  }
  // Nearly every output of a bounded constraint must finish for the check to mean something.
  EXPECT_GT(total.finished, 4 * total.cut)
      << total.finished << " finished, " << total.cut << " cut";
  validate_with_python(jsonl);
}

TEST(StructuredOutput, StoriesOutputsAreValidInEverySetting) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  auto draft = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  run_settings(*m, draft.get(),
               {{"batched"},
                {"tiny pool (preemption)", 24, 96},
                {"chunks of 5", 0, 5},
                {"prompt lookup", 0, 512, SpecMethod::Ngram, 4},
                {"layer skip", 0, 512, SpecMethod::LayerSkip, 3},
                {"draft model", 0, 512, SpecMethod::DraftModel, 4},
                {"draft model, tiny pool", 24, 96, SpecMethod::DraftModel, 3},
                {"no jump-forward", 0, 512, SpecMethod::None, 0, false}},
               4, 300);
}

// TinyLlama's 32,000-token vocabulary (byte tokens and made-up pieces) on small random weights:
// near-uniform logits over a large vocabulary try many more tokens at every position.
TEST(StructuredOutput, RandomTinyLlamaVocabularyOutputsAreValid) {
  tools::GenConfig g = tools::preset("tinyllama-1.1b");
  g.n_embd = 64, g.n_layer = 2, g.n_ff = 128, g.n_head = 4, g.n_head_kv = 2;
  test::TempDir dir;
  tools::write_random_model(g, dir.file("m.gguf"));
  auto m = Model::load(dir.file("m.gguf"));
  run_settings(*m, m.get(),
               {{"batched"},
                {"prompt lookup", 0, 512, SpecMethod::Ngram, 3},
                {"draft model", 0, 512, SpecMethod::DraftModel, 3}},
               2, 300);
}

TEST(StructuredOutput, RefusedConstraintsNameTheProblem) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  Engine e(*m, pool, EngineConfig{});
  Request r;
  r.prompt = m->tokenizer->encode("Hi", true);
  r.constraint.emplace();
  r.constraint->kind = Kind::JsonSchema;
  const std::pair<const char*, const char*> bad[] = {
      {R"({"type":"string","not":{"pattern":"a"}})", "not"},
      {R"({"type":"array","uniqueItems":true})", "uniqueItems"},
      {R"({"$ref":"https://example.com/s.json"})", "$ref"},
      {R"({"type":"object")", "JSON"}};
  for (const auto& [text, word] : bad) {
    r.constraint->text = text;
    try {
      e.submit(r, [](const Output&) {});
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find(word), std::string::npos) << err.what();
    }
  }
  r.constraint->kind = Kind::Gbnf;
  r.constraint->text = "root ::= root \"a\"\n";
  EXPECT_THROW(e.submit(r, [](const Output&) {}), Error);
  EXPECT_TRUE(e.idle());
}

// A request that carries its compiled constraint (Engine::compile) is not compiled again, even
// after more distinct constraints than the engine keeps have pushed it out of the lookup.
TEST(StructuredOutput, ACarriedCompiledConstraintIsNeverCompiledAgain) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  Engine e(*m, pool, EngineConfig{});
  auto choice = [](int i) {
    grammar::Constraint c;
    c.kind = Kind::Choice;
    c.choices = {"dog" + std::to_string(i), "cat"};
    return c;
  };
  const auto first = e.compile(choice(0));
  EXPECT_EQ(e.compile(choice(0)), first);  // found, not compiled
  const int n = static_cast<int>(GrammarCache::kMaxEntries) + 8;
  for (int i = 1; i < n; ++i) (void)e.compile(choice(i));
  EXPECT_EQ(e.stats().constraints_compiled, n);
  Request r;
  r.prompt = m->tokenizer->encode("The", true);
  r.sampling.temperature = 0;
  r.max_tokens = 8;
  r.constraint = choice(0);
  r.compiled_constraint = first;
  std::string text;
  e.submit(r, [&](const Output& o) { text += o.text; });
  e.run_until_idle();
  EXPECT_TRUE(text == "dog0" || text == "cat") << text;
  EXPECT_EQ(e.stats().constraints_compiled, n);
  r.compiled_constraint = nullptr;  // without it, the evicted constraint is compiled again
  e.submit(r, [](const Output&) {});
  e.run_until_idle();
  EXPECT_EQ(e.stats().constraints_compiled, n + 1);
}

// Log-probabilities under a constraint are the model's distribution over the allowed tokens: the
// alternatives offered are tokens the constraint allowed there.
TEST(StructuredOutput, LogprobsOfferOnlyAllowedTokens) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(1);
  Engine e(*m, pool, EngineConfig{});
  Request r;
  r.prompt = m->tokenizer->encode("The cat", true);
  r.sampling.temperature = 0;
  r.logprobs = 5;
  r.max_tokens = 20;
  r.constraint.emplace();
  r.constraint->kind = Kind::Choice;
  r.constraint->choices = {"dog", "day", "door"};
  grammar::Matcher replay(compiled(*r.constraint, *m->tokenizer));
  std::string text;
  int events = 0;
  e.submit(r, [&](const Output& o) {
    text += o.text;
    if (o.token < 0) return;
    ASSERT_NE(o.logprobs, nullptr);
    ++events;
    EXPECT_LE(o.logprobs->logprob, 0.0f);
    for (const auto& [t, lp] : o.logprobs->top) EXPECT_TRUE(replay.allows(t)) << "token " << t;
    EXPECT_TRUE(replay.accept(o.token));
  });
  e.run_until_idle();
  EXPECT_TRUE(text == "dog" || text == "day" || text == "door") << text;
  EXPECT_GT(events, 1);
  EXPECT_EQ(e.stats().forced_tokens, 0);  // no jump-forward where logprobs are asked for
}

}  // namespace
}  // namespace brisk
