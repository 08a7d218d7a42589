// OpenAI's API requests: a completion or chat request body checked field by field and turned into
// engine requests, and the error bodies. Field names, defaults and errors follow OpenAI's API (with
// vLLM's extra sampling fields); the response shapes are in server/response_shapes.h.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "chat/prompt_format.h"
#include "chat/tool_family.h"
#include "engine/engine.h"

namespace brisk::server {

// Bodies keep their keys' order: a JSON Schema's properties are generated in it, and a chat
// template renders tools' parameters in it.
using json = nlohmann::ordered_json;

// A request the API refuses: HTTP status, OpenAI's error type, and the offending field.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::string param = "", std::string type = "",
           std::string code = "");
  int status;
  std::string type, param, code;
};
// {"error": {"message", "type", "param", "code"}}
std::string error_body(const ApiError& e);
// Refuses a request with a 400 naming the offending field: every part of a body's validation
// reports through this one shape.
[[noreturn]] void bad_param(const std::string& param, const std::string& message);
// Whether an optional field is given: absent or null means the default.
bool present(const json& body, const char* key);

// Parses a request body: a JSON object, nested no deeper than a fixed limit (checked before
// parsing, so a hostile body cannot exhaust the parser's stack).
json parse_body(const std::string& body);

enum class Api { Completions, Chat };

// What one API request asks of the engine: one prompt (chat) or several (completions), each
// with n completions; choice i*n + j is completion j of prompt i.
struct ApiRequest {
  Api api = Api::Completions;
  std::string model;  // as the client named it ("" if not given)
  std::vector<std::vector<int32_t>> prompts;
  Request base;  // sampling, stops, max tokens, n, logprobs; prompt left empty
  bool stream = false, include_usage = false, echo = false;
  int top_logprobs = 0;          // alternatives per token when logprobs are on
  std::string constraint_param;  // the field base.constraint came from, for its errors
  // Chat: how the reply is split into reasoning, content and tool calls (its tools family is
  // "none" unless the request has tools), and the tools it may call.
  ReplyFormat reply_format;
  bool in_reasoning = false;  // the prompt opened the reasoning block
  json tools = json::array();
  bool legacy_functions = false;  // calls go back as function_call (the request used `functions`)
};

ApiRequest parse_completion_request(const json& body, const PromptFormat& fmt,
                                    const RequestBounds& bounds);
// reply_format: the layout of the server's model family (tool calls, reasoning).
ApiRequest parse_chat_request(const json& body, const PromptFormat& fmt,
                              const RequestBounds& bounds, const ReplyFormat& reply_format);

// A chat body's messages with its template variables (tools unless tool_choice is none,
// chat_template_kwargs) rendered; a 400 naming 'messages' when they are malformed or the template
// fails on them. Tools reach a template that has no place for them described in the system
// message, as the family's tool_instructions write them.
struct ChatTools;  // server/tools.h: the body's tools, parsed once by the caller
std::string render_messages(const json& body, const ChatTools& tools,
                            const PromptFormat& prompt_format, bool add_generation_prompt,
                            const ToolFamily& family);

// /tokenize: a prompt (with add_special_tokens) or a chat's messages (rendered as
// render_messages does), as token ids.
std::vector<int32_t> parse_tokenize_request(const json& body, const PromptFormat& prompt_format,
                                            const ToolFamily& family);
// /detokenize: the body's token ids, each one of the vocabulary's.
std::vector<int32_t> parse_detokenize_request(const json& body, int64_t n_vocab);

// Serializes for the wire: invalid UTF-8 (a token's partial character) becomes U+FFFD instead of
// an exception.
std::string dump(const json& j);

}  // namespace brisk::server
