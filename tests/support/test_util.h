#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ops/cpu.h"

namespace brisk::test {

// Path of a file under ../shared (relative to the repository root, where tests run). Fails the
// test loudly if it is missing: these fixtures are required, never skipped.
std::string shared(const std::string& rel);

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& data);

// Deterministic pseudo-random floats in [-1, 1).
std::vector<float> random_floats(size_t n, uint64_t seed);

// Every instruction set this CPU runs (BRISK_ISA does not cap it): kernels are tested on each.
std::vector<Isa> available_isas();

}  // namespace brisk::test
