// Stop strings over streamed text: text that could still turn into a stop string is held back,
// and nothing from a stop string on is ever emitted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace brisk {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops = {});
  // Adds generated text. Returns what can be emitted now; sets `stopped` when a stop string
  // appeared (the text before it is returned, the stop string and anything after are dropped).
  std::string push(std::string_view text, bool& stopped);
  // The held-back text, when generation ends for another reason.
  std::string flush();

 private:
  std::vector<std::string> stops_;
  std::string pending_;
};

}  // namespace brisk
