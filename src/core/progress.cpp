#include "core/progress.h"

#include <unistd.h>

#include <cstdio>

namespace brisk {

ProgressBar::ProgressBar(std::string label, double total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && isatty(2)) {}

void ProgressBar::update(double done, const std::string& suffix) {
  if (!enabled_ || total_ <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && drawn_ && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  const double f = done >= total_ ? 1.0 : done / total_;
  const int width = 30, fill = static_cast<int>(width * f);
  std::fprintf(stderr, "\r%s [%.*s%*s] %5.1f%% %s\033[K", label_.c_str(), fill,
               "##############################", width - fill, "", 100.0 * f, suffix.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

}  // namespace brisk
