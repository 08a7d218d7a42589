#include "server/response_shapes.h"

#include <chrono>
#include <random>

#include <fmt/format.h>

namespace brisk::server {

namespace {
int64_t unix_time() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
}  // namespace

ResponseHead new_response_head(Api api, const std::string& model) {
  static std::mt19937_64 rng{std::random_device{}()};
  ResponseHead h;
  h.api = api;
  h.id = fmt::format("{}{:016x}{:016x}", api == Api::Chat ? "chatcmpl-" : "cmpl-", rng(), rng());
  h.created = unix_time();
  h.model = model;
  return h;
}

const char* finish_reason(FinishReason r) {
  return r == FinishReason::Length ? "length" : "stop";
}

json usage(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens) {
  return json{{"prompt_tokens", prompt_tokens},
              {"completion_tokens", completion_tokens},
              {"total_tokens", prompt_tokens + completion_tokens},
              {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

json timings(int64_t prompt_n, double prompt_seconds, int64_t predicted_n,
             double predicted_seconds) {
  const double prompt_ms = prompt_seconds * 1e3, predicted_ms = predicted_seconds * 1e3;
  const auto rate = [](double n, double ms) {
    return ms > 0 && n > 0 ? json(n * 1e3 / ms) : json(nullptr);
  };
  return json{{"prompt_n", prompt_n},
              {"prompt_ms", prompt_ms},
              {"prompt_per_second", rate(static_cast<double>(prompt_n), prompt_ms)},
              {"predicted_n", predicted_n},
              {"predicted_ms", predicted_ms},
              {"predicted_per_second", rate(static_cast<double>(predicted_n - 1), predicted_ms)}};
}

namespace {

json chunk_head(const ResponseHead& h) {
  return json{{"id", h.id},
              {"object", h.api == Api::Chat ? "chat.completion.chunk" : "text_completion"},
              {"created", h.created},
              {"model", h.model}};
}

json chunk(const ResponseHead& h, json choice, bool include_usage) {
  json c = chunk_head(h);
  c["choices"] = json::array({std::move(choice)});
  if (include_usage) c["usage"] = nullptr;
  return c;
}

}  // namespace

json text_chunk(const ResponseHead& h, int index, const std::string& text, const json& logprobs,
                const char* finish, bool include_usage) {
  json choice = {{"index", index}};
  if (h.api == Api::Chat)
    choice["delta"] = text.empty() && finish ? json::object() : json{{"content", text}};
  else
    choice["text"] = text;
  choice["logprobs"] = logprobs;
  choice["finish_reason"] = finish ? json(finish) : json(nullptr);
  return chunk(h, std::move(choice), include_usage);
}

json role_chunk(const ResponseHead& h, int index, bool include_usage) {
  return chunk(h,
               {{"index", index},
                {"delta", {{"role", "assistant"}, {"content", ""}}},
                {"logprobs", nullptr},
                {"finish_reason", nullptr}},
               include_usage);
}

json usage_chunk(const ResponseHead& h, const json& u) {
  json c = chunk_head(h);
  c["choices"] = json::array();
  c["usage"] = u;
  return c;
}

json choice_body(const ResponseHead& h, size_t index, const std::string& text, const json& logprobs,
                 FinishReason finish) {
  json c = {{"index", index}};
  if (h.api == Api::Chat)
    c["message"] = {{"role", "assistant"}, {"content", text}};
  else
    c["text"] = text;
  c["logprobs"] = logprobs;
  c["finish_reason"] = finish_reason(finish);
  return c;
}

json response_body(const ResponseHead& h, json choices, json u) {
  return json{{"id", h.id},
              {"object", h.api == Api::Chat ? "chat.completion" : "text_completion"},
              {"created", h.created},
              {"model", h.model},
              {"choices", std::move(choices)},
              {"usage", std::move(u)}};
}

std::string new_call_id(const ToolFamily& f) {
  static std::mt19937_64 rng{std::random_device{}()};
  return f.new_call_id(rng);
}

const char* reply_finish_reason(FinishReason r, bool has_calls) {
  return has_calls && r == FinishReason::Stop ? "tool_calls" : finish_reason(r);
}

std::vector<json> reply_chunks(const ResponseHead& h, int index, const ReplyDelta& d,
                               const std::vector<std::string>& call_ids, const json& logprobs,
                               const char* finish, bool include_usage) {
  std::vector<json> deltas;
  json text = json::object();
  if (!d.reasoning.empty()) text["reasoning_content"] = d.reasoning;
  if (!d.content.empty()) text["content"] = d.content;
  if (!text.empty()) deltas.push_back(std::move(text));
  for (const ReplyDelta::Call& c : d.calls) {
    if (c.first)
      deltas.push_back(
          {{"tool_calls", json::array({{{"index", c.index},
                                        {"id", call_ids.at(c.index)},
                                        {"type", "function"},
                                        {"function", {{"name", c.name}, {"arguments", ""}}}}})}});
    if (!c.arguments.empty())
      deltas.push_back(
          {{"tool_calls",
            json::array({{{"index", c.index}, {"function", {{"arguments", c.arguments}}}}})}});
  }
  if (deltas.empty() && (finish || !logprobs.is_null())) deltas.push_back(json::object());
  std::vector<json> out;
  for (size_t i = 0; i < deltas.size(); ++i) {
    const bool last = i + 1 == deltas.size();
    out.push_back(chunk(h,
                        {{"index", index},
                         {"delta", std::move(deltas[i])},
                         {"logprobs", i == 0 ? logprobs : json(nullptr)},
                         {"finish_reason", last && finish ? json(finish) : json(nullptr)}},
                        include_usage));
  }
  return out;
}

json reply_choice(size_t index, const Reply& r, const std::vector<std::string>& call_ids,
                  const json& logprobs, const char* finish) {
  json msg = {{"role", "assistant"}};
  msg["content"] = r.content.empty() && !r.calls.empty() ? json(nullptr) : json(r.content);
  if (!r.reasoning.empty()) msg["reasoning_content"] = r.reasoning;
  if (!r.calls.empty()) {
    json calls = json::array();
    for (size_t i = 0; i < r.calls.size(); ++i)
      calls.push_back(
          {{"id", call_ids.at(i)},
           {"type", "function"},
           {"function", {{"name", r.calls[i].name}, {"arguments", r.calls[i].arguments}}}});
    msg["tool_calls"] = std::move(calls);
  }
  return json{{"index", index},
              {"message", std::move(msg)},
              {"logprobs", logprobs},
              {"finish_reason", finish}};
}

json model_object(const std::string& model, int64_t max_model_len) {
  return json{{"id", model},
              {"object", "model"},
              {"created", unix_time()},
              {"owned_by", "brisk"},
              {"max_model_len", max_model_len}};
}

json models_body(const std::string& model, int64_t max_model_len) {
  return json{{"object", "list"}, {"data", json::array({model_object(model, max_model_len)})}};
}

json completion_logprobs(const Tokenizer& tok, const std::vector<int32_t>& tokens,
                         const std::vector<TokenLogprobs>& lps, int64_t text_offset) {
  json out = {{"tokens", json::array()},
              {"token_logprobs", json::array()},
              {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string s = tok.token_bytes(tokens[i], true);
    out["tokens"].push_back(s);
    out["token_logprobs"].push_back(lps[i].logprob);
    json top = json::object();
    for (const auto& [id, lp] : lps[i].top) top[tok.token_bytes(id, true)] = lp;
    out["top_logprobs"].push_back(top);
    out["text_offset"].push_back(text_offset);
    text_offset += static_cast<int64_t>(s.size());
  }
  return out;
}

json chat_logprobs(const Tokenizer& tok, const std::vector<int32_t>& tokens,
                   const std::vector<TokenLogprobs>& lps) {
  auto entry = [&](int32_t id, float lp) {
    const std::string s = tok.token_bytes(id, true);
    json bytes = json::array();
    for (unsigned char c : s) bytes.push_back(static_cast<int>(c));
    return json{{"token", s}, {"logprob", lp}, {"bytes", bytes}};
  };
  json content = json::array();
  for (size_t i = 0; i < tokens.size(); ++i) {
    json e = entry(tokens[i], lps[i].logprob);
    e["top_logprobs"] = json::array();
    for (const auto& [id, lp] : lps[i].top) e["top_logprobs"].push_back(entry(id, lp));
    content.push_back(std::move(e));
  }
  return json{{"content", content}};
}

}  // namespace brisk::server
