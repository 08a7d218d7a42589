// Test helper: writes a loaded llama-architecture model as a Hugging Face directory (config.json,
// two safetensors shards with an index, tokenizer.json, tokenizer_config.json) so the safetensors
// loader can be checked against the same weights in another format.
#pragma once

#include <string>

#include "model/model.h"

namespace brisk::test {

void export_hf(const Model& m, const std::string& dir, DType type);

}  // namespace brisk::test
