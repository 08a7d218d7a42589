// Hugging Face model directories: config.json, one or more *.safetensors (sharded through
// model.safetensors.index.json) and tokenizer.json / tokenizer_config.json. Converted to
// GGUF-style metadata and tensor names; Q/K rows are un-permuted from Hugging Face's rotate-half
// layout to the interleaved layout GGUF's llama architecture uses.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/metadata.h"

namespace brisk {

ModelFile load_hf_directory(const std::string& dir);

// Parses one .safetensors file (names as stored, shapes reversed to ggml order).
ModelFile load_safetensors(const std::string& path);

// Writes one .safetensors file (names as given; ggml shapes reversed to row-major order).
void write_safetensors(const std::string& path, const std::vector<Tensor>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// The Hugging Face name of a GGUF-named llama-family tensor ("" if it has none).
std::string hf_tensor_name(const std::string& gguf);

// Row permutation between Hugging Face and GGUF layouts of a Q or K projection with n_head heads:
// GGUF row (h*hd + 2i + j) holds Hugging Face row (h*hd + j*hd/2 + i).
int64_t hf_row_for_gguf_row(int64_t gguf_row, int64_t head_dim);

}  // namespace brisk
