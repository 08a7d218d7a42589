// The one clock brisk times itself with: steady (never jumps with the wall clock), in seconds.
#pragma once

#include <chrono>

namespace brisk {

inline double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace brisk
