// Hugging Face tokenizer.json (+ tokenizer_config.json beside it) turned into the GGUF
// tokenizer.ggml.* keys, as llama.cpp's converter writes them, so every tokenizer brisk runs is
// described one way (and a GGUF written from a Hugging Face directory carries it).
#pragma once

#include <string>

#include "core/metadata.h"

namespace brisk {

// Adds the tokenizer described by `tokenizer_json` to mf.meta; errors name the file and field.
void add_hf_tokenizer(ModelFile& mf, const std::string& tokenizer_json);

// A ModelFile holding only the tokenizer of a tokenizer.json (for `brisk tokenize`).
ModelFile load_hf_tokenizer_file(const std::string& tokenizer_json);

}  // namespace brisk
