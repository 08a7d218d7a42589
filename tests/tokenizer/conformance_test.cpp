// Every string of every tokenizer fixture in ../shared: llama.cpp's vocab-only GGUF files with
// ids that Hugging Face's tokenizers produced (add_special = false, parse_special = false), and
// the Llama-3 and Qwen tokenizer.json files against the llama-bpe and qwen2 id lists.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "formats/loader.h"
#include "support/test_util.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace brisk {
namespace {

struct Fixture {
  const char* name;    // ggml-vocab-NAME.gguf.inp/.out
  const char* source;  // the vocabulary: the GGUF, or a tokenizer.json
  bool lossless;       // decoding gives the (normalized) input back
};

const Fixture kFixtures[] = {
    {"llama-spm", "tokenizers/llama.cpp-vocab/ggml-vocab-llama-spm.gguf", true},
    {"phi-3", "tokenizers/llama.cpp-vocab/ggml-vocab-phi-3.gguf", true},
    {"gpt-2", "tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf", true},
    {"mpt", "tokenizers/llama.cpp-vocab/ggml-vocab-mpt.gguf", true},
    {"falcon", "tokenizers/llama.cpp-vocab/ggml-vocab-falcon.gguf", true},
    {"starcoder", "tokenizers/llama.cpp-vocab/ggml-vocab-starcoder.gguf", true},
    {"refact", "tokenizers/llama.cpp-vocab/ggml-vocab-refact.gguf", true},
    {"deepseek-llm", "tokenizers/llama.cpp-vocab/ggml-vocab-deepseek-llm.gguf", true},
    {"deepseek-coder", "tokenizers/llama.cpp-vocab/ggml-vocab-deepseek-coder.gguf", true},
    {"bert-bge", "tokenizers/llama.cpp-vocab/ggml-vocab-bert-bge.gguf", false},
    {"llama-bpe", "tokenizers/llama3-hf/tokenizer.json", true},
    {"qwen2", "tokenizers/qwen3-hf/tokenizer.json", true},
};

void PrintTo(const Fixture& f, std::ostream* os) {
  *os << f.name;
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": missing (see ../shared/README.md)");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> fixture_texts(const std::string& inp) {
  const std::string all = read_all(inp);
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> texts;
  for (size_t p = 0;;) {
    const size_t q = all.find(sep, p);
    if (q == std::string::npos) break;
    texts.push_back(all.substr(p, q - p));
    p = q + sep.size();
  }
  return texts;
}

std::vector<std::vector<int32_t>> fixture_ids(const std::string& out) {
  std::stringstream f(read_all(out));
  std::vector<std::vector<int32_t>> ids;
  std::string line;
  while (std::getline(f, line)) {
    std::stringstream ls(line);
    std::vector<int32_t> v;
    for (int32_t id; ls >> id;) v.push_back(id);
    ids.push_back(std::move(v));
  }
  return ids;
}

std::string decode_all(const Tokenizer& t, const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += t.token_bytes(id);
  return s;
}

class Conformance : public ::testing::TestWithParam<Fixture> {};

TEST_P(Conformance, EveryFixtureStringGivesTheReferenceIds) {
  const Fixture& f = GetParam();
  const std::string base = std::string("tokenizers/llama.cpp-vocab/ggml-vocab-") + f.name;
  const auto texts = fixture_texts(test::shared(base + ".gguf.inp"));
  const auto ids = fixture_ids(test::shared(base + ".gguf.out"));
  ASSERT_EQ(texts.size(), ids.size()) << f.name;
  ASSERT_GE(texts.size(), 40u);
  auto tok = Tokenizer::create(load_model_file(test::shared(f.source)));
  size_t passed = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto got = tok->encode(texts[i], false, false);
    EXPECT_EQ(got, ids[i]) << f.name << " string #" << i << ": '" << texts[i] << "'";
    passed += got == ids[i];
    if (!f.lossless) continue;
    std::string want = texts[i];
    if (tok->vocab().model == "llama" && tok->vocab().add_space_prefix && !want.empty())
      want = " " + want;
    if (tok->vocab().normalizer.empty() && tok->vocab().pre == "qwen2")
      want = normalize(want, NormForm::NFC);
    EXPECT_EQ(decode_all(*tok, got), want) << f.name << " string #" << i;
  }
  EXPECT_EQ(passed, texts.size()) << f.name;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Conformance, ::testing::ValuesIn(kFixtures),
                         [](const ::testing::TestParamInfo<Fixture>& p) {
                           std::string n = p.param.name;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace brisk
