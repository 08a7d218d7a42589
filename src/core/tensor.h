// A tensor is a named, typed view over memory owned elsewhere (a mapped file or a buffer kept
// alive by the model). Dimensions follow ggml: ne[0] is the row length (contiguous).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace brisk {

struct Tensor {
  std::string name;
  DType type = DType::F32;
  int n_dims = 0;
  std::array<int64_t, 4> ne{1, 1, 1, 1};
  const void* data = nullptr;
  uint64_t nbytes = 0;
  // Rows interleaved in groups of 16 at load time for the int8 kernels (see ops/repack.h): same
  // bytes in all, but row(r) no longer points at row r alone.
  bool interleaved = false;

  int64_t cols() const { return ne[0]; }
  int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
  int64_t elements() const { return ne[0] * rows(); }
  uint64_t row_bytes() const { return *dtype_row_bytes(type, static_cast<uint64_t>(ne[0])); }
  const uint8_t* row(int64_t r) const {
    return static_cast<const uint8_t*>(data) + static_cast<uint64_t>(r) * row_bytes();
  }
  std::string shape_string() const;
};

}  // namespace brisk
