// The server's request parsing and response shapes without HTTP: each body becomes the engine
// request and the constraint it should, each bad field is a 400 naming it, and the shapes carry
// the fields OpenAI's clients read. The node suites beside this file drive the same code through
// a running server and the real SDKs.
#include <gtest/gtest.h>

#include "formats/loader.h"
#include "server/openai.h"
#include "server/response_shapes.h"
#include "server/tools.h"
#include "support/test_util.h"

namespace brisk::server {
namespace {

struct Fixture {
  std::unique_ptr<Tokenizer> tok =
      Tokenizer::create(load_model_file(test::shared("models/stories260K/stories260K.gguf")));
  PromptFormat fmt{*tok};
  RequestBounds bounds() const { return {static_cast<int64_t>(tok->vocab().size()), 512}; }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

ApiRequest chat(const json& body, const ReplyFormat& rf = {}) {
  return parse_chat_request(body, fixture().fmt, fixture().bounds(), rf);
}

// The ApiError a body gets, and its param.
std::string refused_param(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400) << e.what();
    return e.param;
  }
  ADD_FAILURE() << "accepted";
  return "";
}

const json kMessages = json::array({{{"role", "user"}, {"content", "Hi"}}});

TEST(ServerRequest, ChatBodiesBecomeEngineRequests) {
  const ApiRequest r = chat({{"messages", kMessages},
                             {"max_tokens", 7},
                             {"n", 2},
                             {"temperature", 0.5},
                             {"stop", "x"},
                             {"seed", 3},
                             {"stream", true},
                             {"stream_options", {{"include_usage", true}}}});
  EXPECT_EQ(r.api, Api::Chat);
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_FALSE(r.prompts[0].empty());
  EXPECT_EQ(r.base.max_tokens, 7);
  EXPECT_EQ(r.base.n, 2);
  EXPECT_FLOAT_EQ(r.base.sampling.temperature, 0.5f);
  EXPECT_EQ(r.base.stop, std::vector<std::string>{"x"});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_FALSE(r.base.constraint);
}

TEST(ServerRequest, ConstraintsComeFromTheirFields) {
  const json schema = {{"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}};
  const ApiRequest r =
      chat({{"messages", kMessages},
            {"response_format",
             {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}}});
  ASSERT_TRUE(r.base.constraint);
  EXPECT_EQ(r.base.constraint->kind, grammar::Constraint::Kind::JsonSchema);
  EXPECT_EQ(r.constraint_param, "response_format");
  const json tools =
      json::array({{{"type", "function"},
                    {"function", {{"name", "f"}, {"parameters", {{"type", "object"}}}}}}});
  const ApiRequest t =
      chat({{"messages", kMessages}, {"tools", tools}, {"tool_choice", "required"}},
           {ToolFamily::named("hermes"), ReasoningFamily::None});
  ASSERT_TRUE(t.base.constraint);
  EXPECT_EQ(t.constraint_param, "tools");
  EXPECT_EQ(t.reply_format.tools->name(), "hermes");
  const ChatTools parsed = parse_tools({{"tools", tools}, {"tool_choice", "required"}});
  EXPECT_EQ(parsed.choice.mode, ToolChoice::Mode::Required);
  EXPECT_TRUE(parsed.choice.parallel);
  const ChatTools named = parse_tools(
      {{"tools", tools}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "f"}}}}}});
  EXPECT_EQ(named.choice.mode, ToolChoice::Mode::Function);
  EXPECT_FALSE(named.choice.parallel);  // a named function is called once
}

TEST(ServerRequest, BadFieldsAreRefusedByName) {
  EXPECT_EQ(refused_param([] { chat({{"messages", kMessages}, {"n", 0}}); }), "n");
  EXPECT_EQ(refused_param([] {
              chat({{"messages", kMessages}, {"temperature", "hot"}});
            }),
            "temperature");
  EXPECT_EQ(refused_param([] { chat({{"messages", json::array()}}); }), "messages");
  EXPECT_EQ(refused_param([] {
              chat({{"messages", kMessages}, {"max_tokens", 100000}});
            }),
            "max_tokens");
  EXPECT_EQ(refused_param([] { parse_tools({{"tools", "f"}}); }), "tools");
  EXPECT_EQ(refused_param([] {
              parse_tools({{"tools", json::array()}, {"tool_choice", "required"}});
            }),
            "tool_choice");
  EXPECT_EQ(refused_param([] { parse_body(std::string(1000, '[') + std::string(1000, ']')); }), "");
  EXPECT_THROW(parse_body("[1]"), ApiError);  // a body is an object
  EXPECT_THROW(parse_body("{\"a\": "), ApiError);
}

TEST(ServerRequest, CompletionBodiesTakeSeveralPrompts) {
  const ApiRequest r = parse_completion_request(
      {{"prompt", json::array({"a b", "c"})}, {"echo", true}}, fixture().fmt, fixture().bounds());
  EXPECT_EQ(r.api, Api::Completions);
  EXPECT_EQ(r.prompts.size(), 2u);
  EXPECT_TRUE(r.echo);
  EXPECT_EQ(r.base.max_tokens, 16);  // OpenAI's default for completions
}

TEST(ServerRequest, TokenizeAndDetokenizeBodies) {
  const auto ids = parse_tokenize_request({{"prompt", "a b"}, {"add_special_tokens", false}},
                                          fixture().fmt, ToolFamily::none());
  EXPECT_FALSE(ids.empty());
  EXPECT_EQ(parse_detokenize_request({{"tokens", json(ids)}}, fixture().bounds().n_vocab), ids);
  const auto field = [](auto&& parse) {
    try {
      parse();
    } catch (const ApiError& e) {
      return e.param;
    }
    return std::string("accepted");
  };
  EXPECT_EQ(field([] {
              parse_tokenize_request({{"prompt", 5}}, fixture().fmt, ToolFamily::none());
            }),
            "prompt");
  EXPECT_EQ(field([] {
              parse_tokenize_request({{"prompt", "x"}, {"add_special_tokens", "yes"}},
                                     fixture().fmt, ToolFamily::none());
            }),
            "add_special_tokens");
  EXPECT_EQ(field([] { parse_detokenize_request({{"tokens", {1, 1 << 30}}}, 512); }), "tokens");
}

TEST(ServerResponse, ShapesCarryWhatClientsRead) {
  const ResponseHead h = new_response_head(Api::Chat, "m");
  EXPECT_EQ(h.id.rfind("chatcmpl-", 0), 0u);
  const json u = usage(5, 3, 2);
  EXPECT_EQ(u["total_tokens"], 8);
  EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"], 2);
  Reply reply;
  reply.content = "";
  reply.calls.push_back({"f", "{\"a\":1}", true});
  const json c =
      reply_choice(0, reply, {"call_1"}, nullptr, reply_finish_reason(FinishReason::Stop, true));
  EXPECT_EQ(c["finish_reason"], "tool_calls");
  EXPECT_TRUE(c["message"]["content"].is_null());
  EXPECT_EQ(c["message"]["tool_calls"][0]["id"], "call_1");
  EXPECT_EQ(c["message"]["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
  const json m = models_body("m", 512);
  EXPECT_EQ(m["object"], "list");
  EXPECT_EQ(m["data"][0]["id"], "m");
  EXPECT_EQ(m["data"][0]["max_model_len"], 512);
}

}  // namespace
}  // namespace brisk::server
