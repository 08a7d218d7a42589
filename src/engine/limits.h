// The bounds a request or an engine configuration may ask for, and the one check of a request
// against them: the engine runs it on each request it is given, and the server and the command
// line run it before they start anything, mapping the field it names to their own spelling.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "core/error.h"

namespace brisk {

struct Request;  // engine/request.h

inline constexpr int kMaxCompletions = 128;  // n (and best_of) completions of one prompt
inline constexpr int kMaxLogprobs = 20;      // alternatives per token (OpenAI's top_logprobs)
inline constexpr int kMaxDraftTokens = 64;   // speculative tokens proposed per step
inline constexpr int kMaxNgram = 64;         // prompt lookup: longest suffix searched for

// A request the engine refuses: the field at fault as OpenAI's completions API names it
// ("prompt", "n", "max_tokens", "logprobs", "stop_token_ids", "num_speculative_tokens"), and why.
class RequestError : public Error {
 public:
  RequestError(std::string field_name, const std::string& message)
      : Error(message), field(std::move(field_name)) {}
  std::string field;
};

// What one engine can take: its vocabulary and its maximum model length (prompt and output).
struct RequestBounds {
  int64_t n_vocab = 0;
  int64_t max_model_len = 0;
};

// Every limit a request is held to, for one prompt (a request's own, or each of a server
// request's prompts). Throws RequestError.
void check_request(const Request& r, std::span<const int32_t> prompt, const RequestBounds& b);

}  // namespace brisk
