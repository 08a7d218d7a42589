// The engine's own record of a request and of each of its completions (a sequence): what the
// scheduler sees of it, its sampler, detokenizer and stop matcher, and its speculation state.
// Internal to the engine and engine/spec/.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "engine/request.h"
#include "engine/sampler.h"
#include "engine/scheduler.h"
#include "engine/spec/draft_policy.h"
#include "engine/stop.h"
#include "engine/structured_output.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

struct Req;

struct Seq : SchedSeq {
  Seq(Req* r, int idx, const Tokenizer& tok, const SamplingParams& sp);
  Req* req;
  int index;  // which of the request's n completions
  int64_t n_prompt = 0, n_generated = 0;
  Sampler sampler;
  StreamDecoder dec;
  StopMatcher stop;
  bool done = false;
  bool forked = false;  // children of an n > 1 request were created from it
  double scheduled_at = 0;
  TokenLogprobs logprobs;
  std::optional<SeqGrammar> matcher;  // where the request asked for a constraint
  // Speculation: a model drafter's sampler and the distributions of its proposals (for
  // verification), the sequence's acceptance so far (for the draft length), and how far a draft
  // model's cache holds the sequence (see DraftTask; -1: not known).
  Sampler draft_sampler;
  std::vector<Distribution> draft_q;
  DraftPolicy::Seq spec;
  int64_t n_draft_computed = -1;
};

struct Req {
  RequestId id;
  Request request;
  OutputFn fn;
  std::shared_ptr<const grammar::CompiledGrammar> compiled_grammar;  // its constraint's
  std::vector<std::unique_ptr<Seq>> seqs;
  bool aborted = false;
  bool all_done() const;
};

}  // namespace brisk
