// llama2.c checkpoints: the legacy format (7 int32 header) and the version-1 export ('ak42'), with
// a llama2.c tokenizer file. Converted to GGUF-style metadata and tensor names, zero-copy.
#pragma once

#include <string>

#include "core/metadata.h"

namespace brisk {

bool is_llama2c_checkpoint(const std::string& path);
// tokenizer_path may be empty: then tokenizer.bin or tok<vocab>.bin beside the model is used.
ModelFile load_llama2c(const std::string& path, const std::string& tokenizer_path);

// Adds the vocabulary of a llama2.c tokenizer file to mf's metadata (tokenizer.ggml.*).
void add_llama2c_vocab(ModelFile& mf, const std::string& tokenizer_path, int64_t vocab_size);

}  // namespace brisk
