#include "core/memory_stats.h"

#include <fstream>
#include <sstream>
#include <string>

namespace brisk {
namespace {

// A "Key:   N kB" line of a /proc file, in bytes.
uint64_t proc_kib(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream ss(line.substr(key.size() + 1));
      uint64_t kib = 0;
      ss >> kib;
      return kib * 1024;
    }
  return 0;
}

}  // namespace

uint64_t resident_bytes() {
  return proc_kib("/proc/self/status", "VmRSS");
}
uint64_t peak_resident_bytes() {
  return proc_kib("/proc/self/status", "VmHWM");
}
uint64_t total_memory_bytes() {
  return proc_kib("/proc/meminfo", "MemTotal");
}

}  // namespace brisk
