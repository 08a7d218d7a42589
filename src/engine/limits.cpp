#include "engine/limits.h"

#include "engine/request.h"

namespace brisk {

namespace {

[[noreturn]] void refuse(const char* field, const std::string& message) {
  throw RequestError(field, message);
}

void check_ids(std::span<const int32_t> ids, const char* field, int64_t n_vocab) {
  for (int32_t t : ids)
    if (t < 0 || t >= n_vocab)
      refuse(field, fmt::format("token id {} is outside the vocabulary (0 to {})", t, n_vocab - 1));
}

}  // namespace

void check_request(const Request& r, std::span<const int32_t> prompt, const RequestBounds& b) {
  if (prompt.empty()) refuse("prompt", "the prompt is empty");
  check_ids(prompt, "prompt", b.n_vocab);
  check_ids(r.stop_token_ids, "stop_token_ids", b.n_vocab);
  if (r.n < 1 || r.n > kMaxCompletions)
    refuse("n", fmt::format("n = {} completions: must be between 1 and {}", r.n, kMaxCompletions));
  if (r.logprobs > kMaxLogprobs)
    refuse("logprobs", fmt::format("logprobs = {}: at most {} alternatives per token", r.logprobs,
                                   kMaxLogprobs));
  if (r.draft_max > kMaxDraftTokens)
    refuse("num_speculative_tokens",
           fmt::format("{} speculative tokens: at most {}", r.draft_max, kMaxDraftTokens));
  const auto len = static_cast<int64_t>(prompt.size());
  // One position is left for the first generated token.
  if (len >= b.max_model_len)
    refuse("prompt", fmt::format("This model's maximum context length is {} tokens. However, your "
                                 "prompt has {} tokens.",
                                 b.max_model_len, len));
  if (r.max_tokens == 0) refuse("max_tokens", "max_tokens must be at least 1");
  if (r.max_tokens > 0 && len + r.max_tokens > b.max_model_len)
    refuse("max_tokens",
           fmt::format("This model's maximum context length is {} tokens. However, you requested "
                       "{} tokens ({} in the prompt, {} for the completion).",
                       b.max_model_len, len + r.max_tokens, len, r.max_tokens));
}

}  // namespace brisk
