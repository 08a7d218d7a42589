// Tool calls round-trip in every family: 256 random generations per family under its tool grammar
// (tool_choice required, parallel or not, a named function, and auto) on a byte-level vocabulary
// with some longer pieces, then parsed back. Every required generation is a complete call of an
// allowed function whose arguments are a JSON object with the schema's required keys and
// values in range; the reply streamed a byte at a time parses the same.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "chat/reply_stream.h"
#include "chat/tool_grammar_builder.h"
#include "core/error.h"
#include "formats/hf_tokenizer.h"
#include "grammar/matcher.h"
#include "support/test_util.h"
#include "tokenizer/tokenizer.h"

namespace brisk {
namespace {

using ojson = nlohmann::ordered_json;

const ojson kTools = ojson::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
   "properties": {"city": {"type": "string", "maxLength": 12},
                  "days": {"type": "integer", "minimum": 1, "maximum": 7},
                  "unit": {"enum": ["celsius", "fahrenheit"]}},
   "required": ["city", "days"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
   "properties": {"tz": {"type": "string", "maxLength": 6}}, "additionalProperties": false}}}])");

// Every byte, and pieces a tokenizer would have, markers included.
std::shared_ptr<const grammar::TokenTrie> vocab() {
  std::vector<std::string> bytes = {""};  // 0: end of generation
  for (int b = 1; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  for (const char* s : {"<tool_call>",
                        "</tool_call>",
                        "{\"",
                        "\": ",
                        "\", \"",
                        "get_weather",
                        "get_time",
                        "city",
                        "days",
                        "unit",
                        "celsius",
                        "fahrenheit",
                        "tz",
                        "Paris",
                        " Oslo",
                        "[TOOL_CALLS]",
                        "[ARGS]",
                        "<think>",
                        "</think>",
                        "<function=",
                        "<parameter=",
                        "</parameter>",
                        "</function>",
                        "name",
                        "arguments",
                        "parameters",
                        "\n",
                        "\"}",
                        "}}",
                        "<|START_ACTION|>",
                        "<|END_ACTION|>",
                        "<|tool_call|>",
                        "functools",
                        "tool_calls",
                        "response",
                        "\u00e9t\u00e9",
                        " the",
                        "<\uff5ctool\u2581calls\u2581begin\uff5c>",
                        "<\uff5ctool\u2581call\u2581begin\uff5c>",
                        "<\uff5ctool\u2581sep\uff5c>",
                        "<\uff5ctool\u2581call\u2581end\uff5c>",
                        "<\uff5ctool\u2581calls\u2581end\uff5c>",
                        "```json\n",
                        "\n```",
                        "<|channel|>",
                        "<|message|>",
                        "<|end|>",
                        "<|start|>",
                        "assistant",
                        "analysis",
                        "commentary",
                        "to=functions.",
                        "<|constrain|>json"})
    bytes.emplace_back(s);
  return std::make_shared<grammar::TokenTrie>(std::move(bytes), std::vector<int32_t>{0});
}

// A random generation: uniform among allowed tokens, but one that closes something (a quote,
// bracket or tag) is preferred a third of the time so that strings end; it stops where the
// grammar may end, half the time. Returns the text, or nullopt if it ran out of budget.
std::optional<std::string> generate(const std::shared_ptr<const grammar::CompiledGrammar>& cg,
                                    uint32_t seed) {
  grammar::Matcher m(cg);
  std::mt19937 rng(seed);
  const auto& trie = cg->trie();
  std::vector<uint64_t> mask(trie.n_words());
  std::string text;
  for (int step = 0; step < 2000; ++step) {
    if (m.done() || (m.can_end() && rng() % 2 == 0)) return text;
    m.fill_mask(mask.data());
    std::vector<int32_t> allowed, closing;
    for (int32_t t = 1; t < trie.n_vocab(); ++t)
      if ((mask[size_t(t) >> 6] >> (t & 63)) & 1) {
        allowed.push_back(t);
        if (trie.bytes(t).find_first_of("\"}]>") != std::string::npos) closing.push_back(t);
      }
    if (allowed.empty()) return m.can_end() ? std::optional(text) : std::nullopt;
    const auto& pool = !closing.empty() && rng() % 3 == 0 ? closing : allowed;
    const int32_t t = pool[rng() % pool.size()];
    EXPECT_TRUE(m.accept(t));
    text += trie.bytes(t);
  }
  return std::nullopt;
}

void check_args(const ToolCallText& c, const std::string& what) {
  ojson a;
  ASSERT_NO_THROW(a = ojson::parse(c.arguments)) << what << ": " << c.arguments;
  ASSERT_TRUE(a.is_object()) << what;
  if (c.name == "get_weather") {
    ASSERT_TRUE(a.contains("city") && a["city"].is_string()) << what << ": " << c.arguments;
    // JSON Schema's integers include 2.0.
    ASSERT_TRUE(a.contains("days") && a["days"].is_number()) << what;
    const double days = a["days"].get<double>();
    EXPECT_EQ(days, std::floor(days)) << what;
    EXPECT_GE(days, 1) << what;
    EXPECT_LE(days, 7) << what;
    for (auto it = a.begin(); it != a.end(); ++it)
      EXPECT_TRUE(it.key() == "city" || it.key() == "days" || it.key() == "unit") << what;
  } else {
    ASSERT_EQ(c.name, "get_time") << what;
  }
}

// 32 random generations of a family under each tool_choice, with and without reasoning, parsed
// back whole and streamed a byte at a time; returns the number of calls read.
int round_trip(const ToolFamily& f, const std::shared_ptr<const grammar::TokenTrie>& trie) {
  using Mode = ToolChoice::Mode;
  const std::vector<ToolChoice> choices = {{Mode::Required, "", true},
                                           {Mode::Required, "", false},
                                           {Mode::Function, "get_time", true},
                                           {Mode::Auto, "", true}};
  int calls = 0;
  for (const ToolChoice& choice : choices)
    for (bool think : {false, true}) {
      const ReasoningFamily with =
          f.carries_reasoning() ? ReasoningFamily::Harmony : ReasoningFamily::ThinkTags;
      const ReplyFormat rf{&f, think ? with : ReasoningFamily::None};
      const auto c = tool_constraint(rf, false, kTools, choice);
      EXPECT_TRUE(c.has_value());
      if (!c) return calls;
      const auto cg =
          std::make_shared<const grammar::CompiledGrammar>(grammar::constraint_grammar(*c), trie);
      const ReplyParser parser(rf, false, kTools);
      for (uint32_t seed = 0; seed < 32; ++seed) {
        const auto text = generate(cg, seed);
        const std::string what = std::string(f.name()) + " " + ToolChoice::name(choice.mode) +
                                 (choice.parallel ? "" : " single") + " seed " +
                                 std::to_string(seed) + ": " + text.value_or("(no end)");
        EXPECT_TRUE(text.has_value()) << what;
        if (!text) return calls;
        const Reply r = parser.parse(*text, false);
        if (choice.mode != Mode::Auto) {
          EXPECT_FALSE(r.calls.empty()) << what;
        }
        if (!choice.parallel) {
          EXPECT_LE(r.calls.size(), 1u) << what;
        }
        for (const ToolCallText& call : r.calls) {
          EXPECT_TRUE(call.complete) << what;
          if (choice.mode == Mode::Function) {
            EXPECT_EQ(call.name, "get_time") << what;
          }
          check_args(call, what);
          ++calls;
        }
        ReplyStream st(parser);
        for (char ch : *text) st.push(std::string_view(&ch, 1));
        st.finish();
        EXPECT_EQ(st.sent().calls.size(), r.calls.size()) << what;
        for (size_t i = 0; i < r.calls.size() && i < st.sent().calls.size(); ++i)
          EXPECT_EQ(st.sent().calls[i].arguments, r.calls[i].arguments) << what;
        EXPECT_EQ(st.sent().content, r.content) << what;
        EXPECT_EQ(st.sent().reasoning, r.reasoning) << what;
      }
    }
  return calls;
}

TEST(ToolGrammar, EveryFamilyRoundTripsItsCalls) {
  const auto trie = vocab();
  int families = 0;
  for (const ToolFamily* f : ToolFamily::all()) {
    if (!f->writes_calls()) continue;
    const int calls = round_trip(*f, trie);
    EXPECT_GT(calls, 100) << f->name();  // hundreds per family
    ++families;
  }
  EXPECT_GE(families, 12);
}

// A family added the way a new one is: its syntax in one class (here, in this file alone), and one
// registration. <|fn|>NAME<|args|>{...}<|/fn|>, one section per call.
class MadeUpFamily final : public ToolFamily {
 public:
  std::string_view name() const override { return "made_up_test"; }
  bool taught_by(std::string_view t) const override { return t.find(kOpen) != t.npos; }
  std::string trigger() const override { return std::string(kOpen); }
  CallGrammar call_grammar(ToolGrammarBuilder& b) const override {
    return {trigger(), b.one_of("call", [&](size_t i) {
              auto s = b.lit(b.tool_name(i) + std::string(kArgs));
              s.push_back(b.ref(b.args(i)));
              return b.cat(s, b.lit(kClose));
            })};
  }

 protected:
  tool_layouts::Section read_section(std::string_view s, size_t pos, bool, const json&,
                                     std::vector<ToolCallText>& calls) const override {
    const size_t a = s.find(kArgs, pos);
    if (a == s.npos) return {pos, false};
    const size_t start = tool_layouts::skip_ws(s, a + kArgs.size());
    const JsonEnd v = json_value_end(s, start, tool_layouts::kMaxReplyNesting);
    calls.push_back(
        {std::string(s.substr(pos, a - pos)), std::string(s.substr(start, v.end - start)), false});
    const size_t e = tool_layouts::skip_ws(s, v.end);
    if (v.state != JsonSpan::Complete || !s.substr(e).starts_with(kClose)) return {pos, false};
    calls.back().complete = true;
    return {e + kClose.size(), true};
  }
  bool section_per_call() const override { return true; }

 private:
  static constexpr std::string_view kOpen = "<|fn|>", kArgs = "<|args|>", kClose = "<|/fn|>";
};

TEST(ToolGrammar, AFamilyAddedInOneFileIsFoundParsedAndConstrained) {
  static const MadeUpFamily family;
  if (!ToolFamily::named(family.name())) ToolFamily::add(family);
  EXPECT_THROW(ToolFamily::add(family), Error);  // a name is registered once
  EXPECT_EQ(ToolFamily::named("made_up_test"), &family);
  EXPECT_EQ(&ToolFamily::detect("{{ tools }} answer with <|fn|>name<|args|>{...}<|/fn|>"), &family);
  EXPECT_EQ(ToolFamily::detect("<tool_call>").name(), "hermes");  // the others still found
  const Reply r = ReplyParser({&family, ReasoningFamily::None})
                      .parse("Sure.<|fn|>get_time<|args|>{\"tz\": \"UTC\"}<|/fn|>", false);
  EXPECT_EQ(r.content, "Sure.");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].name, "get_time");
  EXPECT_EQ(r.calls[0].arguments, "{\"tz\": \"UTC\"}");
  EXPECT_GT(round_trip(family, vocab()), 100);
}

// A marker that is a special token in one vocabulary (Llama 3's <|start_header_id|>) is allowed as
// that token where a tool grammar writes its text, and stays spelled-out text elsewhere.
TEST(ToolGrammar, SpecialTokenMarkersAreGeneratedAsTheirToken) {
  const auto tok = Tokenizer::create(
      load_hf_tokenizer_file(test::shared("tokenizers/llama3-hf/tokenizer.json")));
  const int32_t tag = tok->vocab().find("<|start_header_id|>");
  ASSERT_GE(tag, 0);
  grammar::Grammar g;
  const int32_t r = g.add_rule("root");
  grammar::Sequence seq;
  for (char c : std::string("<|start_header_id|>{}"))
    seq.push_back(grammar::Symbol::one(uint8_t(c)));
  g.add_alt(r, seq);
  g.set_root(r);
  for (bool special : {true, false}) {
    const auto trie = std::make_shared<const grammar::TokenTrie>(
        grammar::TokenTrie::from_tokenizer(*tok, special));
    grammar::Matcher m(std::make_shared<const grammar::CompiledGrammar>(g, trie));
    EXPECT_EQ(m.allows(tag), special);
  }
  // The tool constraints ask for it.
  const auto c =
      tool_constraint({ToolFamily::named("hermes"), ReasoningFamily::None}, false, kTools, {});
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->special_text);
}

}  // namespace
}  // namespace brisk
