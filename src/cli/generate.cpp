#include "cli/generate.h"

#include <chrono>

#include "cli/common.h"
#include "core/clock.h"

namespace brisk::cli {

Generation generate(Engine& e, Request r, const std::function<void(const std::string&)>& on_text) {
  Generation g;
  bool done = false;
  double t_first = 0, t_last = 0;
  const double t0 = now_seconds();
  const RequestId id = e.submit(std::move(r), [&](const Output& o) {
    if (o.token >= 0) {
      t_last = now_seconds();
      if (g.generated_tokens++ == 0) t_first = t_last;
    }
    g.prompt_tokens = o.prompt_tokens;
    g.cached_tokens = o.cached_tokens;
    if (!o.text.empty()) on_text(o.text);
    if (o.finish != FinishReason::None) {
      g.finish = o.finish;
      done = true;
    }
  });
  bool aborted = false;
  while (!done) {
    if (g_interrupted && !aborted) {
      e.abort(id);
      aborted = true;
      g.interrupted = true;
    }
    e.step();
  }
  if (g.generated_tokens > 0) {
    g.prompt_seconds = t_first - t0;
    g.generate_seconds = t_last - t_first;
  } else {
    g.prompt_seconds = now_seconds() - t0;
  }
  return g;
}

}  // namespace brisk::cli
