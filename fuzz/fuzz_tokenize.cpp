// Arbitrary bytes through each tokenizer algorithm (the first byte picks one): SentencePiece,
// byte-level BPE with GPT-2's, Llama 3's and Qwen's pre-tokenizers, and WordPiece. Encoding must
// not fail on any bytes, and decoding the ids (whole and streamed) must not either.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

#include "formats/loader.h"
#include "fuzz_util.h"
#include "tokenizer/tokenizer.h"

namespace {
std::vector<std::unique_ptr<brisk::Tokenizer>> load() {
  std::vector<std::unique_ptr<brisk::Tokenizer>> v;
  for (const char* f :
       {"tokenizers/llama.cpp-vocab/ggml-vocab-llama-spm.gguf",
        "tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf", "tokenizers/llama3-hf/tokenizer.json",
        "tokenizers/qwen3-hf/tokenizer.json", "tokenizers/llama.cpp-vocab/ggml-vocab-bert-bge.gguf",
        "tokenizers/llama.cpp-vocab/ggml-vocab-phi-3.gguf"}) {
    try {
      v.push_back(brisk::Tokenizer::create(brisk::load_model_file(brisk::fuzz::shared(f))));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fuzz_tokenize: %s\n", e.what());
      std::abort();  // the fixtures must load
    }
  }
  return v;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto toks = load();
  if (size == 0) return 0;
  const brisk::Tokenizer& tok = *toks[data[0] % toks.size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto ids = tok.encode(text, (data[0] & 0x80) != 0, (data[0] & 0x40) != 0);
  std::string whole;
  brisk::StreamDecoder d(tok, (data[0] & 0x20) != 0);
  for (int32_t id : ids) {
    whole += tok.token_bytes(id);
    (void)d.push(id);
  }
  (void)d.flush();
  return 0;
}
