// Opens a model in any supported format, chosen by content: a GGUF file, a llama2.c checkpoint, or
// a Hugging Face directory (config.json + *.safetensors + tokenizer.json).
#pragma once

#include <string>

#include "core/metadata.h"

namespace brisk {

ModelFile load_model_file(const std::string& path, const std::string& tokenizer_path = "");

}  // namespace brisk
