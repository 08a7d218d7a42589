// Shared by the fuzz targets: inputs split into parts, and files written where loaders read them.
// Every target treats a brisk::Error (or a std::exception a loader throws on purpose) as a good
// answer to bad input; only crashes, sanitizer reports, hangs and runaway memory are findings.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace brisk::fuzz {

// Parts separated by a line "-----" (the seed corpus and dictionaries use it too).
inline std::vector<std::string> split_parts(const uint8_t* data, size_t size, size_t max_parts) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const std::string_view sep = "\n-----\n";
  std::vector<std::string> parts;
  size_t p = 0;
  while (parts.size() + 1 < max_parts) {
    const size_t q = all.find(sep, p);
    if (q == std::string_view::npos) break;
    parts.emplace_back(all.substr(p, q - p));
    p = q + sep.size();
  }
  parts.emplace_back(all.substr(p));
  while (parts.size() < max_parts) parts.emplace_back();
  return parts;
}

// A private scratch folder (one per process; libFuzzer's workers are processes), removed when the
// process exits normally so repeated test runs do not fill /tmp.
inline const std::string& scratch_dir() {
  struct Scratch {
    std::string path = "/tmp/brisk-fuzz-XXXXXX";
    Scratch() {
      if (!mkdtemp(path.data())) std::abort();
    }
    ~Scratch() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Scratch dir;
  return dir.path;
}

inline std::string write_file(const std::string& name, std::string_view bytes) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// ../shared beside the checkout, or BRISK_SHARED.
inline std::string shared(const std::string& rel) {
  const char* s = std::getenv("BRISK_SHARED");
  return std::string(s ? s : "../shared") + "/" + rel;
}

}  // namespace brisk::fuzz
