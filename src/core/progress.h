// A progress bar on standard error for long work (downloads, quantizing, perplexity). Drawn only
// when stderr is a terminal, at most every 200 ms; a suffix carries a running figure.
#pragma once

#include <chrono>
#include <string>

namespace brisk {

class ProgressBar {
 public:
  ProgressBar(std::string label, double total, bool enabled = true);
  // Redraws (rate-limited unless done == total).
  void update(double done, const std::string& suffix = "");
  // Ends the line if anything was drawn.
  void finish();
  ~ProgressBar() { finish(); }

 private:
  std::string label_;
  double total_;
  bool enabled_, drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace brisk
