// One request through the engine on the calling thread, for the interactive commands (run, chat):
// text is handed over as it is released, and Ctrl-C ends the request at the next step.
#pragma once

#include <functional>
#include <string>

#include "engine/engine.h"

namespace brisk::cli {

struct Generation {
  int64_t prompt_tokens = 0, cached_tokens = 0, generated_tokens = 0;
  double prompt_seconds = 0;    // submission to the first token
  double generate_seconds = 0;  // first token to the last
  FinishReason finish = FinishReason::None;
  bool interrupted = false;
};

Generation generate(Engine& e, Request r, const std::function<void(const std::string&)>& on_text);

// The engine for one interactive conversation: a single sequence of up to n_ctx tokens.
EngineConfig single_sequence_config(const Model& m, int64_t n_ctx, int64_t n_batch,
                                    const std::string& kv_dtype, const SpecConfig& spec);

}  // namespace brisk::cli
