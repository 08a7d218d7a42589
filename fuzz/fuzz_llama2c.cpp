// A llama2.c checkpoint and its tokenizer.bin from anywhere (parts separated by a "-----" line).
#include <exception>

#include "formats/llama2c.h"
#include "fuzz_util.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  const auto parts = fuzz::split_parts(data, size, 2);
  const std::string ckpt = fuzz::write_file("model.bin", parts[0]);
  const std::string tok = fuzz::write_file("tokenizer.bin", parts[1]);
  try {
    const ModelFile mf = load_llama2c(ckpt, tok);
    const HParams hp = HParams::from_model(mf);
    (void)Weights::bind(mf, hp);
    (void)Tokenizer::create(mf)->encode("Once upon a time", true);
  } catch (const std::exception&) {
  }
  return 0;
}
