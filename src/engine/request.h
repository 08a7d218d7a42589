// What a client asks of the engine and what it gets back: a request (prompt ids, sampling, limits,
// stops) and the stream of outputs of each of its completions.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampler.h"
#include "engine/spec/spec_config.h"
#include "grammar/constraint.h"
#include "grammar/matcher.h"

namespace brisk {

using RequestId = uint64_t;

struct Request {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  int64_t max_tokens = -1;  // -1: until the model's context is full
  int n = 1;                // completions of the prompt (they share its KV blocks)
  std::vector<std::string> stop;
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  int logprobs = -1;   // -1: none; k >= 0: each token's log-probability and the k most likely
  int draft_max = -1;  // speculative tokens per step: -1 the engine's, 0 none, at most the engine's
  // The proposer for this request: the engine's (unset), none, prompt lookup, or the engine's own
  // model proposer by name (a request cannot ask for a model the engine has not loaded).
  std::optional<SpecMethod> proposer;
  // Structured output: the text is constrained to this (JSON, a schema, a regex, a grammar or a
  // choice); generation ends with the constraint's end (or by length, or a stop string).
  std::optional<grammar::Constraint> constraint;
  // The constraint as Engine::compile() returned it, carried so that it is never compiled again
  // (the engine keeps only the most recently used ones for lookup). Unset: submit() compiles it.
  std::shared_ptr<const grammar::CompiledGrammar> compiled_constraint;
  // The text of special tokens the model generates (end-of-generation ones aside) is left out
  // unless this is false (vLLM's skip_special_tokens): a tool call's markers may be such tokens.
  bool skip_special_tokens = true;
};

enum class FinishReason { None, Stop, Length, Abort };

// One event of one completion: a new token and the text it releases (possibly empty while a
// character or a possible stop string is incomplete), and on the last event the reason.
struct Output {
  RequestId id;
  int index;      // which of the request's n completions
  int32_t token;  // -1 on an event that only finishes (abort)
  std::string text;
  FinishReason finish = FinishReason::None;
  int64_t prompt_tokens = 0;  // of this completion's prompt
  int64_t cached_tokens = 0;  // prompt tokens whose KV came from the prefix cache
  double scheduled_at = 0;    // steady-clock seconds when its prompt first entered a batch
  const TokenLogprobs* logprobs = nullptr;  // when the request asked; null on an abort event
};
using OutputFn = std::function<void(const Output&)>;

}  // namespace brisk
