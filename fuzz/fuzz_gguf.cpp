// A GGUF file from anywhere: the reader, then everything that reads its metadata (hyper-
// parameters, weight binding, the vocabulary and tokenizer, the chat template).
#include <exception>

#include "chat/chat_template.h"
#include "formats/gguf.h"
#include "fuzz_util.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  const std::string path =
      fuzz::write_file("model.gguf", {reinterpret_cast<const char*>(data), size});
  try {
    const ModelFile mf = load_gguf(path);
    try {
      const HParams hp = HParams::from_model(mf);
      (void)Weights::bind(mf, hp);
    } catch (const std::exception&) {
    }
    try {
      const auto tok = Tokenizer::create(mf);
      (void)tok->encode("Hello, world! 123 \xC3\xA9", true);
      (void)ChatTemplate::for_vocab(tok->vocab())
          .apply(nlohmann::ordered_json::parse(R"([{"role":"user","content":"hi"}])"), true);
    } catch (const std::exception&) {
    }
  } catch (const std::exception&) {
  }
  return 0;
}
