// tokenizer.json and tokenizer_config.json from anywhere (parts separated by a "-----" line): the
// vocabulary, merges, pre-tokenizer and normalizer they describe, then a few texts through it.
#include <exception>

#include "chat/chat_template.h"
#include "formats/hf_tokenizer.h"
#include "fuzz_util.h"
#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  const auto parts = fuzz::split_parts(data, size, 2);
  const std::string tj = fuzz::write_file("tokenizer.json", parts[0]);
  fuzz::write_file("tokenizer_config.json", parts[1]);
  try {
    const ModelFile mf = load_hf_tokenizer_file(tj);
    const auto tok = Tokenizer::create(mf);
    for (const char* text :
         {"Hello world", " 12345  x\n\ny", "\xC3\xA9\xE6\x97\xA5\xF0\x9F\x8E\x89 <s>"}) {
      const auto ids = tok->encode(text, true);
      StreamDecoder d(*tok);
      for (int32_t id : ids) (void)d.push(id);
      (void)d.flush();
    }
    (void)ChatTemplate::for_vocab(tok->vocab())
        .apply(nlohmann::ordered_json::parse(R"([{"role":"user","content":"hi"}])"), true);
  } catch (const std::exception&) {
  }
  return 0;
}
