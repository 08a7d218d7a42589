// OpenAI's response shapes, built from what the engine produced: whole completion and chat
// completion bodies, stream chunks, usage, log-probabilities and finish reasons. server.cpp only
// decides when each is sent.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/reply_stream.h"
#include "engine/request.h"
#include "server/openai.h"
#include "tokenizer/tokenizer.h"

namespace brisk::server {

// What every body and chunk of one response repeats.
struct ResponseHead {
  Api api = Api::Completions;
  std::string id;  // cmpl-... or chatcmpl-...
  int64_t created = 0;
  std::string model;
};
ResponseHead new_response_head(Api api, const std::string& model);

// OpenAI's finish_reason; an engine abort reads as "stop" (the API has no other word for it).
const char* finish_reason(FinishReason r);

// {"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details"}
json usage(int64_t prompt_tokens, int64_t completion_tokens, int64_t cached_tokens);
// llama-server's "timings" beside usage: prompt_ms is the time to the first token, predicted_ms
// the time from it to the last, and predicted_per_second the rate of the tokens after the first.
json timings(int64_t prompt_n, double prompt_seconds, int64_t predicted_n,
             double predicted_seconds);

// A stream chunk of one choice: text (a chat delta's content) with its log-probabilities, and the
// finish reason on the last; with include_usage every chunk carries "usage": null.
json text_chunk(const ResponseHead& h, int index, const std::string& text, const json& logprobs,
                const char* finish, bool include_usage);
// A chat stream's first chunk of a choice: the assistant's role.
json role_chunk(const ResponseHead& h, int index, bool include_usage);
// A stream's last chunk when usage was asked for: no choices, the usage.
json usage_chunk(const ResponseHead& h, const json& usage);

// One choice of a whole response, and the response around the choices.
json choice_body(const ResponseHead& h, size_t index, const std::string& text, const json& logprobs,
                 FinishReason finish);
json response_body(const ResponseHead& h, json choices, json usage);

// Tool calls: an id for a new call (Mistral's templates want 9 letters and digits), and the
// finish reason of a reply that made calls ("tool_calls" where it ended by itself).
std::string new_call_id(const ToolFamily& f);
const char* reply_finish_reason(FinishReason r, bool has_calls);
// A chat stream's chunks for a parsed reply's delta: reasoning_content and content in one, then
// per call its first delta (index, id, type, name, arguments "") and its arguments' pieces; the
// log-probabilities ride on the first chunk, the finish reason on the last (a lone chunk when
// there is nothing else to send).
std::vector<json> reply_chunks(const ResponseHead& h, int index, const ReplyDelta& d,
                               const std::vector<std::string>& call_ids, const json& logprobs,
                               const char* finish, bool include_usage);
// A chat choice of a whole parsed reply: message.content (null when only calls were made),
// reasoning_content when there was any, tool_calls.
json reply_choice(size_t index, const Reply& r, const std::vector<std::string>& call_ids,
                  const json& logprobs, const char* finish);

// GET /v1/models: the one model served (vLLM adds max_model_len); GET /v1/models/{id}: that
// model's object alone.
json model_object(const std::string& model, int64_t max_model_len);
json models_body(const std::string& model, int64_t max_model_len);

// One generated token's log-probabilities in the shape of each API.
json completion_logprobs(const Tokenizer& tok, const std::vector<int32_t>& tokens,
                         const std::vector<TokenLogprobs>& lps, int64_t text_offset);
json chat_logprobs(const Tokenizer& tok, const std::vector<int32_t>& tokens,
                   const std::vector<TokenLogprobs>& lps);

}  // namespace brisk::server
