// A Hugging Face directory from anywhere: config.json, then model.safetensors (parts separated by
// a "-----" line); the tokenizer.json beside them is a small valid one.
#include <exception>

#include "formats/safetensors.h"
#include "fuzz_util.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace {
constexpr const char* kTokenizer = R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2},
  "merges": ["a b"]}, "pre_tokenizer": {"type": "ByteLevel"}, "added_tokens": []})";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  const auto parts = fuzz::split_parts(data, size, 2);
  fuzz::write_file("config.json", parts[0]);
  fuzz::write_file("model.safetensors", parts[1]);
  fuzz::write_file("tokenizer.json", kTokenizer);
  try {
    (void)load_safetensors(fuzz::scratch_dir() + "/model.safetensors");
  } catch (const std::exception&) {
  }
  try {
    const ModelFile mf = load_hf_directory(fuzz::scratch_dir());
    const HParams hp = HParams::from_model(mf);
    (void)Weights::bind(mf, hp);
  } catch (const std::exception&) {
  }
  return 0;
}
