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

}  // namespace brisk::cli
