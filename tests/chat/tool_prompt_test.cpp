// Agent loops as the SDKs send them (null content beside tool calls, several rounds, parallel
// calls, a tool without a description) render on every template in the fixtures once fitted to
// what the template can render: the model sees its own calls, every tool result and the question.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "chat/tool_family.h"
#include "chat/tool_prompt.h"
#include "core/error.h"
#include "support/test_util.h"

namespace brisk {
namespace {

using json = nlohmann::ordered_json;
const std::string kDir = "tests/chat/jinja/";

json conversation(const std::string& name) {
  for (const json& c : json::parse(test::read_file(kDir + "conversations.json")))
    if (c.at("name") == name) return c;
  ADD_FAILURE() << "no conversation " << name;
  return json::object();
}

TEST(ToolPrompt, SdkAgentLoopRendersOnEveryTemplate) {
  const json manifest = json::parse(test::read_file(kDir + "templates.json"));
  const json conv = conversation("sdk_agent_loop");
  size_t rendered = 0;
  for (auto it = manifest.begin(); it != manifest.end(); ++it) {
    if (it.value().at("reference") != "jinja2") continue;  // model templates only
    const std::string name = it.key();
    const std::string source = test::read_file(kDir + "templates/" + name + ".jinja");
    const ChatTemplate tmpl(source, it.value().at("bos_token"), it.value().at("eos_token"));
    const std::string instructions = ToolFamily::detect(source).tool_instructions(conv.at("tools"));
    const json messages = fit_tools_to_template(conv.at("messages"), tmpl.caps(), instructions);
    json extra = json::object();
    if (instructions.empty()) extra["tools"] = conv.at("tools");
    std::string out;
    try {
      out = tmpl.apply(messages, true, extra);
    } catch (const Error& e) {
      ADD_FAILURE() << name << ": " << e.what() << "\n" << messages.dump(1);
      continue;
    }
    for (const char* text : {"Paris and Tokyo", "18", "24", "21:04", "And in Berlin?",
                             "get_weather", "get_time", "Asia/Tokyo"})
      EXPECT_NE(out.find(text), std::string::npos) << name << " lacks " << text << ":\n" << out;
    ++rendered;
  }
  EXPECT_GE(rendered, 20u);
}

TEST(ToolPrompt, CapsOfKnownTemplates) {
  auto caps = [](const std::string& name) {
    return ChatTemplate(test::read_file(kDir + "templates/" + name + ".jinja")).caps();
  };
  const TemplateCaps chatml = caps("chatml");
  EXPECT_TRUE(chatml.system_role);
  EXPECT_FALSE(chatml.tool_calls);  // a template that never prints calls
  EXPECT_TRUE(chatml.tool_role);
  const TemplateCaps gemma = caps("gemma");
  EXPECT_FALSE(gemma.system_role);
  EXPECT_FALSE(gemma.tool_role);
  EXPECT_FALSE(gemma.consecutive_users);
  const TemplateCaps hermes = caps("qwen2_5");
  EXPECT_TRUE(hermes.tool_calls);
  EXPECT_TRUE(hermes.tool_role);
}

// Where the template forbids a system message and the tool role (Gemma, Mistral 7B), the tools'
// description opens the first user turn and results come back as user turns, merged where the
// template wants roles to alternate.
TEST(ToolPrompt, NoSystemNoToolRole) {
  TemplateCaps c;
  c.system_role = c.tool_role = c.tool_calls = c.consecutive_users = false;
  const json in = json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": null, "tool_calls": [
      {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{\"city\": \"Oslo\"}"}},
      {"id": "c2", "type": "function", "function": {"name": "w", "arguments": "{\"city\": \"Rome\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "rain"},
    {"role": "tool", "tool_call_id": "c2", "content": "sun"},
    {"role": "user", "content": "Thanks"}])");
  const json out = fit_tools_to_template(in, c, "TOOLS");
  ASSERT_EQ(out.size(), 3u) << out.dump(1);
  EXPECT_EQ(out[0]["role"], "user");
  EXPECT_EQ(out[0]["content"], "Be brief.\n\nTOOLS\n\nWeather?");
  EXPECT_EQ(out[1]["role"], "assistant");
  EXPECT_EQ(
      out[1]["content"],
      R"({"tool_calls":[{"name":"w","arguments":{"city":"Oslo"}},{"name":"w","arguments":{"city":"Rome"}}]})");
  EXPECT_FALSE(out[1].contains("tool_calls"));
  EXPECT_EQ(out[2]["role"], "user");
  EXPECT_EQ(out[2]["content"], R"({"tool_response":{"tool_call_id":"c1","content":"rain"}})"
                               "\n\n"
                               R"({"tool_response":{"tool_call_id":"c2","content":"sun"}})"
                               "\n\nThanks");
}

// A conversation without tools passes unchanged, however little the template can do.
TEST(ToolPrompt, PlainConversationsPassUnchanged) {
  TemplateCaps c;
  c.system_role = c.tool_role = c.tool_calls = c.consecutive_users = false;
  const json in =
      json::parse(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])");
  EXPECT_EQ(fit_tools_to_template(in, c, ""), in);
}

}  // namespace
}  // namespace brisk
