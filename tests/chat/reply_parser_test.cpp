// Replies split into reasoning, content and tool calls for every family: realistic outputs (one
// call, parallel calls, text before the call, unicode and escaped quotes in the arguments, a call
// cut off), each also streamed a byte at a time and at every split into two pieces, whose deltas
// must join to the whole reply's parse; and each family found from its template.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chat/reply_stream.h"
#include "support/test_util.h"

namespace brisk {
namespace {

using ojson = nlohmann::ordered_json;

struct Case {
  const char* family;  // its --tool-call-parser name
  ReasoningFamily reasoning;
  std::string text;
  std::string reasoning_out, content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
  bool in_reasoning = false;
};

std::string show(const Reply& r) {
  std::string s = "reasoning=[" + r.reasoning + "] content=[" + r.content + "]";
  for (const auto& c : r.calls)
    s += " call " + c.name + "(" + c.arguments + ")" + (c.complete ? "" : " cut");
  return s;
}

// The deltas of a stream joined into one reply.
Reply joined(const ReplyParser& p, const std::vector<std::string_view>& pieces) {
  ReplyStream st(p);
  Reply r;
  auto take = [&](const ReplyDelta& d) {
    r.reasoning += d.reasoning;
    r.content += d.content;
    for (const auto& c : d.calls) {
      if (c.first) {
        EXPECT_EQ(c.index, r.calls.size());
        r.calls.push_back({c.name, "", false});
      }
      r.calls.at(c.index).arguments += c.arguments;
    }
  };
  for (std::string_view piece : pieces) take(st.push(piece));
  take(st.finish());
  for (size_t i = 0; i < r.calls.size(); ++i) r.calls[i].complete = st.sent().calls[i].complete;
  return r;
}

void expect_same(const Reply& a, const Reply& b, const std::string& what) {
  EXPECT_EQ(a.reasoning, b.reasoning) << what;
  EXPECT_EQ(a.content, b.content) << what;
  ASSERT_EQ(a.calls.size(), b.calls.size()) << what << ": " << show(a) << " vs " << show(b);
  for (size_t i = 0; i < a.calls.size(); ++i) {
    EXPECT_EQ(a.calls[i].name, b.calls[i].name) << what;
    EXPECT_EQ(a.calls[i].arguments, b.calls[i].arguments) << what;
  }
}

const ojson kTools = ojson::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
   "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}}}}])");

std::vector<Case> cases() {
  const std::string dsb = "<\uff5ctool\u2581calls\u2581begin\uff5c>",
                    dcb = "<\uff5ctool\u2581call\u2581begin\uff5c>",
                    dsep = "<\uff5ctool\u2581sep\uff5c>",
                    dce = "<\uff5ctool\u2581call\u2581end\uff5c>",
                    dse = "<\uff5ctool\u2581calls\u2581end\uff5c>";
  using R = ReasoningFamily;
  return {
      {"hermes",
       R::None,
       "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
       "\"Paris\"}}\n</tool_call>",
       "",
       "Let me check.",
       {{"get_weather", "{\"city\": \"Paris\"}"}}},
      {"hermes",
       R::ThinkTags,
       "<think>\nThe user wants two cities.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", "
       "\"arguments\": {\"city\": \"Zürich "
       "\\\"Z\\\"\"}}\n</tool_call>\n<tool_call>\n{\"arguments\": {\"city\": \"東京\", \"days\": "
       "3}, \"name\": \"get_weather\"}\n</tool_call>",
       "The user wants two cities.",
       "",
       {{"get_weather", "{\"city\": \"Zürich \\\"Z\\\"\"}"},
        {"get_weather", "{\"city\": \"東京\", \"days\": 3}"}}},
      {"hermes",
       R::ThinkTags,
       "I need the weather.\n</think>\n\nIt is sunny.",
       "I need the weather.",
       "It is sunny.",
       {},
       true},
      {"hermes",
       R::None,
       "Plain answer with <b>tags</b> and a < sign.",
       "",
       "Plain answer with <b>tags</b> and a < sign.",
       {}},
      {"hermes",
       R::None,
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
       "",
       "",
       {{"get_weather", "{\"city\": \"Par"}}},
      {"qwen3_coder",
       R::None,
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew "
       "York\n</parameter>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>",
       "",
       "",
       {{"get_weather", "{\"city\": \"New York\", \"days\": 2}"}}},
      {"llama3_json",
       R::None,
       "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; {\"name\": "
       "\"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}",
       "",
       "",
       {{"get_weather", "{\"city\": \"Paris\"}"}, {"get_weather", "{\"city\": \"Oslo\"}"}}},
      {"llama3_json",
       R::None,
       "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {}}",
       "",
       "",
       {{"get_weather", "{}"}}},
      {"llama3_json",
       R::None,
       "{\"answer\": 42} is what you get.",
       "",
       "{\"answer\": 42} is what you get.",
       {}},
      {"pythonic",
       R::None,
       "[get_weather(city=\"Paris\", days=3), get_weather(city='O\\'Hare')]",
       "",
       "",
       {{"get_weather", "{\"city\": \"Paris\", \"days\": 3}"},
        {"get_weather", "{\"city\": \"O'Hare\"}"}}},
      {"pythonic", R::None, "[1, 2, 3] are numbers.", "", "[1, 2, 3] are numbers.", {}},
      {"mistral",
       R::None,
       "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": "
       "\"get_weather\", \"arguments\": {\"city\": \"Rome\"}}]",
       "",
       "",
       {{"get_weather", "{\"city\": \"Paris\"}"}, {"get_weather", "{\"city\": \"Rome\"}"}}},
      {"mistral_v11",
       R::None,
       "Checking.[TOOL_CALLS]get_weather[ARGS]{\"city\": "
       "\"Paris\"}[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Lyon\"}",
       "",
       "Checking.",
       {{"get_weather", "{\"city\": \"Paris\"}"}, {"get_weather", "{\"city\": \"Lyon\"}"}}},
      {"deepseek_v3",
       R::ThinkTags,
       "<think>Weather needed.</think>" + dsb + dcb + "function" + dsep +
           "get_weather\n```json\n{\"city\": \"Paris\"}\n```" + dce + dse,
       "Weather needed.",
       "",
       {{"get_weather", "{\"city\": \"Paris\"}"}}},
      {"deepseek_v3",
       R::None,
       "Sure." + dsb + dcb + "get_weather" + dsep + "{\"city\":\"Kyiv\"}" + dce + dse,
       "",
       "Sure.",
       {{"get_weather", "{\"city\":\"Kyiv\"}"}}},
      {"granite",
       R::None,
       "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]",
       "",
       "",
       {{"get_weather", "{\"city\": \"Paris\"}"}}},
      {"command_r7b",
       R::CommandR7B,
       "<|START_THINKING|>I should look it up.<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": "
       "\"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": "
       "\"Paris\"}}]<|END_ACTION|>",
       "I should look it up.",
       "",
       {{"get_weather", "{\"city\": \"Paris\"}"}}},
      {"firefunction_v2",
       R::None,
       " functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]",
       "",
       "",
       {{"get_weather", "{\"city\": \"Paris\"}"}}},
      {"generic",
       R::None,
       "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]}",
       "",
       "",
       {{"get_weather", "{\"city\": \"Paris\"}"}}},
      {"command_r7b",
       R::CommandR7B,
       "<|START_THINKING|>Easy.<|END_THINKING|><|START_RESPONSE|>It is sunny.<|END_RESPONSE|>",
       "Easy.",
       "It is sunny.",
       {}},
      {"openai",
       R::Harmony,
       "<|channel|>analysis<|message|>Need the "
       "weather.<|end|><|start|>assistant<|channel|>commentary "
       "to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}",
       "Need the weather.",
       "",
       {{"get_weather", "{\"city\": \"Paris\"}"}}},
      {"openai",
       R::Harmony,
       "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>It "
       "is sunny.",
       "Easy.",
       "It is sunny.",
       {}},
      {"openai",
       R::Harmony,
       "<|channel|>analysis<|message|>Time.<|end|><|start|>assistant "
       "to=functions.get_time<|channel|>commentary "
       "json<|message|>{}",
       "Time.",
       "",
       {{"get_time", "{}"}}},
      // Found by fuzzing: a repeated arguments key (the first counts, streamed or not), a key that
      // is not valid UTF-8 (plain content).
      {"hermes",
       R::None,
       "<tool_call>{\"arguments\": {\"a\": 1}, \"name\": \"f\", \"parameters\": {}}</tool_call>",
       "",
       "",
       {{"f", "{\"a\": 1}"}}},
      {"generic", R::None, "{\"resp\xff\": 1}", "", "{\"resp\xff\": 1}", {}},
      {"generic",
       R::None,
       "{\"response\": \"Hello \\\"you\\\" \\u00e9\"}",
       "",
       "Hello \"you\" é",
       {}},
  };
}

TEST(ReplyParser, EveryFamilyParsesAndStreamsTheSame) {
  for (const Case& c : cases()) {
    const std::string what = std::string(c.family) + ": " + c.text;
    const ToolFamily* family = ToolFamily::named(c.family);
    ASSERT_NE(family, nullptr) << c.family;
    const ReplyParser p({family, c.reasoning}, c.in_reasoning, kTools);
    const Reply whole = p.parse(c.text, false);
    Reply want{c.reasoning_out, c.content, {}};
    for (const auto& [name, args] : c.calls) want.calls.push_back({name, args, true});
    expect_same(whole, want, what);
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < c.text.size(); ++i)
      bytes.push_back(std::string_view(c.text).substr(i, 1));
    expect_same(joined(p, bytes), whole, what + " (a byte at a time)");
    for (size_t k = 0; k <= c.text.size(); ++k) {
      const std::string_view t = c.text;
      expect_same(joined(p, {t.substr(0, k), t.substr(k)}), whole,
                  what + " (split at " + std::to_string(k) + ")");
    }
  }
}

TEST(ReplyParser, FamiliesAreFoundFromTheirTemplates) {
  auto tmpl = [](const std::string& name) {
    return test::read_file("tests/chat/jinja/templates/" + name + ".jinja");
  };
  EXPECT_EQ(ToolFamily::detect(tmpl("qwen3")).name(), "hermes");
  EXPECT_EQ(detect_reasoning_family(tmpl("qwen3")), ReasoningFamily::ThinkTags);
  EXPECT_EQ(ToolFamily::detect(tmpl("qwen2_5")).name(), "hermes");
  EXPECT_EQ(ToolFamily::detect(tmpl("llama3_2")).name(), "llama3_json");
  EXPECT_EQ(ToolFamily::detect(tmpl("llama3_1")).name(), "generic");  // a copy without tools
  EXPECT_EQ(ToolFamily::detect(tmpl("mistral_nemo")).name(), "mistral");
  EXPECT_EQ(ToolFamily::detect(tmpl("deepseek_v3")).name(), "deepseek_v3");
  EXPECT_EQ(ToolFamily::detect(tmpl("chatml")).name(), "generic");
  EXPECT_EQ(ToolFamily::detect(tmpl("qwen3_coder")).name(), "qwen3_coder");
  EXPECT_EQ(ToolFamily::detect(tmpl("llama4")).name(), "pythonic");
  EXPECT_EQ(ToolFamily::detect(tmpl("mistral_v11")).name(), "mistral_v11");
  EXPECT_EQ(ToolFamily::detect(tmpl("granite")).name(), "granite");
  EXPECT_EQ(ToolFamily::detect(tmpl("command_r7b")).name(), "command_r7b");
  EXPECT_EQ(detect_reasoning_family(tmpl("command_r7b")), ReasoningFamily::CommandR7B);
  EXPECT_EQ(ToolFamily::detect(tmpl("firefunction_v2")).name(), "firefunction_v2");
  EXPECT_EQ(ToolFamily::detect(tmpl("gpt_oss")).name(), "openai");
  EXPECT_EQ(detect_reasoning_family(tmpl("gpt_oss")), ReasoningFamily::Harmony);
  EXPECT_EQ(detect_reasoning_family(tmpl("chatml")), ReasoningFamily::None);
}

TEST(ReplyParser, APromptThatOpensTheReasoningBlockStartsInside) {
  EXPECT_TRUE(
      prompt_opens_reasoning("<|im_start|>assistant\n<think>\n", ReasoningFamily::ThinkTags));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n",
                                      ReasoningFamily::ThinkTags));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n", ReasoningFamily::ThinkTags));
}

}  // namespace
}  // namespace brisk
