// The bounds a request or an engine configuration may ask for, in one place: the engine enforces
// them, and the server and the command line quote them in their checks and errors.
#pragma once

namespace brisk {

inline constexpr int kMaxCompletions = 128;  // n (and best_of) completions of one prompt
inline constexpr int kMaxLogprobs = 20;      // alternatives per token (OpenAI's top_logprobs)
inline constexpr int kMaxDraftTokens = 64;   // speculative tokens proposed per step
inline constexpr int kMaxNgram = 64;         // prompt lookup: longest suffix searched for

}  // namespace brisk
