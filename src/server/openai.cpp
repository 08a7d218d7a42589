#include "server/openai.h"

#include <cmath>
#include <random>

#include "chat/messages.h"
#include "chat/reply_parser.h"
#include "chat/tool_grammar.h"
#include "chat/tool_prompt.h"
#include "core/error.h"
#include "core/json_scan.h"
#include "server/constraint_fields.h"
#include "server/tools.h"

namespace brisk::server {

void bad_param(const std::string& param, const std::string& message) {
  throw ApiError(400, message, param);
}

bool present(const json& body, const char* key) {
  auto it = body.find(key);
  return it != body.end() && !it->is_null();
}

namespace {

constexpr size_t kMaxJsonDepth = 64;
constexpr int kMaxStops = 16;
constexpr size_t kMaxPrompts = 256;

std::string default_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    case 500:
    case 503:
    case 504:
      return "server_error";
    default:
      return "invalid_request_error";
  }
}

// Optional fields: absent or null means the default; a present value must have the right type
// and range.

double get_number(const json& body, const char* key, double def, double lo, double hi) {
  if (!present(body, key)) return def;
  const json& v = body.at(key);
  if (!v.is_number()) bad_param(key, fmt::format("'{}' must be a number", key));
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi)
    bad_param(key, fmt::format("'{}' = {} is out of range ({} to {})", key, x, lo, hi));
  return x;
}

int64_t get_int(const json& body, const char* key, int64_t def, int64_t lo, int64_t hi) {
  if (!present(body, key)) return def;
  const json& v = body.at(key);
  if (!v.is_number_integer() &&
      !(v.is_number_float() && v.get<double>() == std::floor(v.get<double>())))
    bad_param(key, fmt::format("'{}' must be an integer", key));
  // Compared as doubles first, so no out-of-range value is ever converted to an integer.
  const double d = v.get<double>();
  const bool fits = v.is_number_float() ? std::abs(d) < 9.2e18
                                        : !(v.is_number_unsigned() &&
                                            v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX));
  if (!fits || d < static_cast<double>(lo) || d > static_cast<double>(hi))
    bad_param(key, fmt::format("'{}' = {} is out of range ({} to {})", key, v.dump(), lo, hi));
  const int64_t x = v.is_number_float() ? static_cast<int64_t>(d) : v.get<int64_t>();
  if (x < lo || x > hi)
    bad_param(key, fmt::format("'{}' = {} is out of range ({} to {})", key, v.dump(), lo, hi));
  return x;
}

bool get_bool(const json& body, const char* key, bool def) {
  if (!present(body, key)) return def;
  if (!body.at(key).is_boolean()) bad_param(key, fmt::format("'{}' must be true or false", key));
  return body.at(key).get<bool>();
}

std::string get_string(const json& body, const char* key, const std::string& def) {
  if (!present(body, key)) return def;
  if (!body.at(key).is_string()) bad_param(key, fmt::format("'{}' must be a string", key));
  return body.at(key).get<std::string>();
}

// Token ids as integers; their range is the engine's check (engine/limits.h).
std::vector<int32_t> token_list(const json& v, const char* param) {
  std::vector<int32_t> ids;
  for (const json& t : v) {
    if (!t.is_number_integer())
      bad_param(param, fmt::format("'{}' must be text or a list of token ids", param));
    const int64_t id = t.get<int64_t>();
    if (id < INT32_MIN || id > INT32_MAX)
      bad_param(param, fmt::format("token id {} is outside the vocabulary", id));
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

// Fields both APIs share: sampling, stops, n, seeds, streaming.
void parse_common(const json& body, ApiRequest& request, const Tokenizer& tok) {
  request.model = get_string(body, "model", "");
  Request& r = request.base;
  SamplingParams& sp = r.sampling;
  sp.temperature = static_cast<float>(get_number(body, "temperature", 1.0, 0.0, 2.0));
  sp.top_p = static_cast<float>(get_number(body, "top_p", 1.0, 0.0, 1.0));
  if (present(body, "top_p") && sp.top_p <= 0.0f)
    bad_param("top_p", "'top_p' must be greater than 0");
  const int64_t k = get_int(body, "top_k", 0, -1, int64_t{1} << 30);
  sp.top_k = k <= 0 ? 0 : static_cast<int>(k);
  sp.min_p = static_cast<float>(get_number(body, "min_p", 0.0, 0.0, 1.0));
  sp.presence_penalty = static_cast<float>(get_number(body, "presence_penalty", 0.0, -2.0, 2.0));
  sp.frequency_penalty = static_cast<float>(get_number(body, "frequency_penalty", 0.0, -2.0, 2.0));
  sp.repeat_penalty = static_cast<float>(get_number(body, "repetition_penalty", 1.0, 0.01, 100.0));
  sp.penalty_last_n = -1;  // the whole context, as the APIs define the penalties
  if (present(body, "seed"))
    sp.seed = static_cast<uint64_t>(get_int(body, "seed", 0, INT64_MIN, INT64_MAX));
  else
    sp.seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  if (present(body, "logit_bias")) {
    const json& lb = body.at("logit_bias");
    if (!lb.is_object()) bad_param("logit_bias", "'logit_bias' must map token ids to biases");
    for (auto it = lb.begin(); it != lb.end(); ++it) {
      size_t used = 0;
      int64_t id = -1;
      try {
        id = std::stoll(it.key(), &used);
      } catch (const std::exception&) {
      }
      if (used != it.key().size() || id < 0 || id >= tok.vocab().size())
        bad_param("logit_bias",
                  fmt::format("logit_bias: '{}' is not a token id of this model", it.key()));
      if (!it->is_number() || std::abs(it->get<double>()) > 100)
        bad_param("logit_bias", "logit_bias values must be numbers from -100 to 100");
      sp.logit_bias.emplace_back(static_cast<int32_t>(id), it->get<float>());
    }
  }
  if (present(body, "stop")) {
    const json& s = body.at("stop");
    if (s.is_string()) {
      if (!s.get<std::string>().empty()) r.stop.push_back(s.get<std::string>());
    } else if (s.is_array()) {
      if (s.size() > kMaxStops)
        bad_param("stop", fmt::format("at most {} stop sequences", kMaxStops));
      for (const json& x : s) {
        if (!x.is_string()) bad_param("stop", "'stop' must be a string or a list of strings");
        if (!x.get<std::string>().empty()) r.stop.push_back(x.get<std::string>());
      }
    } else {
      bad_param("stop", "'stop' must be a string or a list of strings");
    }
  }
  if (present(body, "stop_token_ids")) {
    if (!body.at("stop_token_ids").is_array())
      bad_param("stop_token_ids", "'stop_token_ids' must be a list");
    r.stop_token_ids = token_list(body.at("stop_token_ids"), "stop_token_ids");
  }
  r.n = static_cast<int>(get_int(body, "n", 1, INT32_MIN, INT32_MAX));
  r.ignore_eos = get_bool(body, "ignore_eos", false);
  // Speculative decoding per request (when the server runs with --spec): 0 turns it off, a smaller
  // number shortens the drafts; the server's --draft-max is the ceiling.
  r.draft_max = static_cast<int>(get_int(body, "num_speculative_tokens", -1, 0, INT32_MAX));
  if (auto c = parse_constraint(body)) {
    r.constraint = std::move(c->constraint);
    request.constraint_param = c->param;
  }
  (void)get_string(body, "user", "");
  request.stream = get_bool(body, "stream", false);
  if (present(body, "stream_options")) {
    const json& so = body.at("stream_options");
    if (!so.is_object()) bad_param("stream_options", "'stream_options' must be an object");
    if (!request.stream)
      bad_param("stream_options", "'stream_options' is only allowed when 'stream' is true");
    request.include_usage = get_bool(so, "include_usage", false);
  }
}

// max_tokens (or max_completion_tokens), then every limit the engine holds each prompt to
// (engine/limits.h), its errors naming the field as this API spells it. Left out, max_tokens is
// `def` where the context has room for it, else the room left (-1: until the context is full).
void parse_max_tokens_and_check(const json& body, ApiRequest& request, int64_t def,
                                const RequestBounds& bounds) {
  const char* key = present(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  request.base.max_tokens = get_int(body, key, def, 1, INT64_MAX);
  size_t longest = 0;
  for (const auto& p : request.prompts) longest = std::max(longest, p.size());
  const int64_t room = bounds.max_model_len - static_cast<int64_t>(longest);
  if (!present(body, key) && room >= 1 && request.base.max_tokens > room)
    request.base.max_tokens = room;
  const bool chat = request.api == Api::Chat;
  for (const auto& p : request.prompts) {
    try {
      check_request(request.base, p, bounds);
    } catch (const RequestError& e) {
      const std::string& f = e.field;
      throw ApiError(400, e.what(),
                     f == "max_tokens"         ? key
                     : f == "prompt" && chat   ? "messages"
                     : f == "logprobs" && chat ? "top_logprobs"
                                               : f);
    }
  }
}

}  // namespace

ApiError::ApiError(int s, const std::string& message, std::string p, std::string t, std::string c)
    : std::runtime_error(message),
      status(s),
      type(t.empty() ? default_type(s) : std::move(t)),
      param(std::move(p)),
      code(std::move(c)) {}

std::string error_body(const ApiError& e) {
  json err = {{"message", e.what()}, {"type", e.type}};
  err["param"] = e.param.empty() ? json(nullptr) : json(e.param);
  err["code"] = e.code.empty() ? json(e.status) : json(e.code);
  return dump(json{{"error", err}});
}

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

json parse_body(const std::string& body) {
  // The nesting, before the recursive parser sees it; other faults are the parser's to name.
  const size_t start = body.find_first_not_of(" \t\r\n");
  if (start != std::string::npos && json_value_end(body, start, kMaxJsonDepth).too_deep)
    throw ApiError(400,
                   fmt::format("the JSON body is nested deeper than {} levels", kMaxJsonDepth));
  json value;
  try {
    value = json::parse(body);
  } catch (const json::parse_error& e) {
    throw ApiError(400, std::string("the body is not valid JSON: ") + e.what());
  }
  if (!value.is_object()) throw ApiError(400, "the body must be a JSON object");
  return value;
}

ApiRequest parse_completion_request(const json& body, const PromptFormat& prompt_format,
                                    const RequestBounds& bounds) {
  ApiRequest request;
  request.api = Api::Completions;
  const Tokenizer& tok = prompt_format.tokenizer();
  parse_common(body, request, tok);
  if (!present(body, "prompt")) bad_param("prompt", "'prompt' is required");
  const json& p = body.at("prompt");
  auto add_text = [&](const std::string& s) {
    request.prompts.push_back(prompt_format.encode_text(s, true));
  };
  if (p.is_string()) {
    add_text(p.get<std::string>());
  } else if (p.is_array() && !p.empty()) {
    if (p.size() > kMaxPrompts) bad_param("prompt", fmt::format("at most {} prompts", kMaxPrompts));
    if (p[0].is_number_integer()) {
      request.prompts.push_back(token_list(p, "prompt"));
    } else {
      for (const json& x : p) {
        if (x.is_string())
          add_text(x.get<std::string>());
        else if (x.is_array() && !x.empty())
          request.prompts.push_back(token_list(x, "prompt"));
        else
          bad_param(
              "prompt",
              "'prompt' must be a string, a list of strings, a list of token ids or a list of "
              "token-id lists (none empty)");
      }
    }
  } else {
    bad_param(
        "prompt",
        "'prompt' must be a string, a list of strings, a list of token ids or a list of token-id "
        "lists (none empty)");
  }
  request.echo = get_bool(body, "echo", false);
  if (present(body, "logprobs")) {
    request.top_logprobs = static_cast<int>(get_int(body, "logprobs", 0, 0, INT32_MAX));
    request.base.logprobs = request.top_logprobs;
    if (request.echo)
      bad_param("echo",
                "'echo' together with 'logprobs' (prompt log-probabilities) is not supported");
  }
  if (present(body, "best_of") && get_int(body, "best_of", 1, 1, INT32_MAX) != request.base.n)
    bad_param("best_of", "'best_of' other than n is not supported");
  if (present(body, "suffix")) bad_param("suffix", "'suffix' is not supported");
  parse_max_tokens_and_check(body, request, 16, bounds);
  return request;
}

std::string render_messages(const json& body, const ChatTools& tools,
                            const PromptFormat& prompt_format, bool add_generation_prompt,
                            const ToolFamily& family) {
  const json& messages = body.at("messages");
  if (!messages.is_array() || messages.empty())
    bad_param("messages", "'messages' must be a non-empty list");
  json extra = json::object();
  if (present(body, "chat_template_kwargs")) {
    if (!body.at("chat_template_kwargs").is_object())
      bad_param("chat_template_kwargs", "'chat_template_kwargs' must be an object");
    extra = body.at("chat_template_kwargs");
  }
  const ChatTemplate& tmpl = prompt_format.chat_template();
  // A template without tools (the generic layout) has them described in the prompt.
  const std::string instructions = tools.active() ? family.tool_instructions(tools.tools) : "";
  if (tools.active() && instructions.empty()) extra["tools"] = tools.tools;
  try {
    return prompt_format.render_chat(fit_tools_to_template(messages, tmpl.caps(), instructions),
                                     add_generation_prompt, extra);
  } catch (const InvalidMessages& e) {
    bad_param("messages", e.what());
  } catch (const Error& e) {
    bad_param("messages", std::string("the chat template failed: ") + e.what());
  }
}

std::vector<int32_t> parse_tokenize_request(const json& body, const PromptFormat& prompt_format,
                                            const ToolFamily& family) {
  if (present(body, "messages"))
    return prompt_format.encode_chat(render_messages(body, parse_tools(body), prompt_format,
                                                     get_bool(body, "add_generation_prompt", true),
                                                     family));
  if (!present(body, "prompt") || !body.at("prompt").is_string())
    bad_param("prompt", "'prompt' (a string) or 'messages' is required");
  return prompt_format.encode_text(body.at("prompt").get<std::string>(),
                                   get_bool(body, "add_special_tokens", true));
}

std::vector<int32_t> parse_detokenize_request(const json& body, int64_t n_vocab) {
  if (!present(body, "tokens") || !body.at("tokens").is_array())
    bad_param("tokens", "'tokens' (a list of token ids) is required");
  std::vector<int32_t> ids;
  for (const json& t : body.at("tokens")) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= n_vocab)
      bad_param("tokens", fmt::format("token {} is not a token id of this model", t.dump()));
    ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return ids;
}

ApiRequest parse_chat_request(const json& body, const PromptFormat& prompt_format,
                              const RequestBounds& bounds, const ReplyFormat& reply_format) {
  ApiRequest request;
  request.api = Api::Chat;
  parse_common(body, request, prompt_format.tokenizer());
  if (!present(body, "messages")) bad_param("messages", "'messages' is required");
  const ChatTools tools = parse_tools(body);
  const std::string rendered =
      render_messages(body, tools, prompt_format, get_bool(body, "add_generation_prompt", true),
                      *reply_format.tools);
  request.prompts.push_back(prompt_format.encode_chat(rendered));
  const bool in_reasoning = prompt_opens_reasoning(rendered, reply_format.reasoning);
  if (tools.active()) {
    request.reply_format.tools = reply_format.tools;
    request.tools = tools.tools;
    request.legacy_functions = tools.legacy;
    if (request.base.constraint && tools.choice.mode != ToolChoice::Mode::Auto)
      bad_param("tool_choice",
                fmt::format("'tool_choice' {} cannot be combined with '{}'",
                            ToolChoice::name(tools.choice.mode), request.constraint_param));
    if (!request.base.constraint) {
      try {
        request.base.constraint =
            tool_constraint(reply_format, in_reasoning, tools.tools, tools.choice);
      } catch (const Error& e) {
        bad_param("tools", e.what());
      }
      if (request.base.constraint) request.constraint_param = "tools";
    }
  }
  request.reply_format.reasoning = reply_format.reasoning;
  request.in_reasoning = in_reasoning;
  // A call's markers may be special tokens: their text is kept where a parser reads the reply.
  request.base.skip_special_tokens =
      get_bool(body, "skip_special_tokens",
               !request.reply_format.tools->writes_calls() &&
                   request.reply_format.reasoning == ReasoningFamily::None);
  if (get_bool(body, "logprobs", false)) {
    request.top_logprobs = static_cast<int>(get_int(body, "top_logprobs", 0, 0, INT32_MAX));
    request.base.logprobs = request.top_logprobs;
  } else if (present(body, "top_logprobs")) {
    bad_param("top_logprobs", "'top_logprobs' needs 'logprobs' set to true");
  }
  parse_max_tokens_and_check(body, request, -1, bounds);
  return request;
}

}  // namespace brisk::server
