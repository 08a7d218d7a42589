#include "formats/loader.h"

#include <filesystem>

#include "core/error.h"
#include "formats/gguf.h"
#include "formats/hf_tokenizer.h"
#include "formats/llama2c.h"
#include "formats/safetensors.h"

namespace brisk {

ModelFile load_model_file(const std::string& path, const std::string& tokenizer_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) fail("{}: no such file or directory", path);
  if (fs::is_directory(path, ec)) return load_hf_directory(path);
  if (is_gguf(path)) return load_gguf(path);
  if (fs::path(path).extension() == ".json") return load_hf_tokenizer_file(path);
  if (is_llama2c_checkpoint(path)) return load_llama2c(path, tokenizer_path);
  fail(
      "{}: unrecognized model format (expected GGUF, a llama2.c checkpoint, or a Hugging Face "
      "directory)",
      path);
}

}  // namespace brisk
