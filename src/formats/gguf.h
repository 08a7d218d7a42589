// GGUF v1/v2/v3 reading (memory-mapped, zero-copy) and writing.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/metadata.h"

namespace brisk {

// Parses and validates a GGUF file. Throws Error naming the file and the problem.
ModelFile load_gguf(const std::string& path);

// True if the file starts with the GGUF magic.
bool is_gguf(const std::string& path);

// Writes a GGUF v3 file. Tensors' data is copied from their `data` pointers.
struct GgufWriteOptions {
  uint32_t alignment = 32;
};
void write_gguf(const std::string& path, const std::map<std::string, Value>& meta,
                const std::vector<Tensor>& tensors, const GgufWriteOptions& opt = {});
// Same, but each tensor's bytes come from fill(index, dst) as it is written, so files larger than
// memory can be produced; `data` is ignored.
void write_gguf_streaming(const std::string& path, const std::map<std::string, Value>& meta,
                          const std::vector<Tensor>& tensors,
                          const std::function<void(size_t, uint8_t*)>& fill,
                          const GgufWriteOptions& opt = {});

}  // namespace brisk
