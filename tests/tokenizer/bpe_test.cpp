// Byte-level BPE and WordPiece behaviour beyond the fixtures: special and user-defined tokens,
// streaming decode, the regex splitter on hostile input, tokenizer.json variants and errors.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/utf8.h"
#include "formats/loader.h"
#include "support/test_util.h"
#include "tokenizer/bpe.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/regex_split.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/wpm.h"

namespace brisk {
namespace {

std::unique_ptr<Tokenizer> load(const std::string& rel) {
  return Tokenizer::create(load_model_file(test::shared(rel)));
}

std::vector<std::string> pieces(const RegexSplitter& s, std::string_view text) {
  std::vector<std::string_view> v;
  s.split(text, v);
  return {v.begin(), v.end()};
}

TEST(RegexSplit, KeepsMatchesAndGapsInOrder) {
  RegexSplitter s({"\\p{N}", kGpt2Regex});
  using V = std::vector<std::string>;
  EXPECT_EQ(pieces(s, "ab 12 c"), (V{"ab", " ", "1", "2", " c"}));
  EXPECT_EQ(pieces(s, "Hello   world"), (V{"Hello", "  ", " world"}));
  EXPECT_EQ(pieces(s, ""), V{});
}

TEST(RegexSplit, InvalidUtf8AndEmptyMatchesNeverHang) {
  RegexSplitter s({"(?=(\\d{3})+(?!\\d))", kGpt2Regex});
  const std::string bad = "a\xff\xfe b\xc3 12345678 \xe2\x82";
  std::string joined;
  for (const auto& p : pieces(s, bad)) joined += p;
  EXPECT_EQ(joined, bad);  // every byte lands in exactly one piece
}

TEST(RegexSplit, SyntaxErrorNamesThePattern) {
  try {
    RegexSplitter s({"([a-z"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("([a-z"), std::string::npos);
  }
}

TEST(Bpe, ByteAlphabetIsABijection) {
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(BpeTokenizer::byte_of_cpt(BpeTokenizer::byte_to_cpt(static_cast<uint8_t>(b))), b);
  EXPECT_EQ(BpeTokenizer::byte_to_cpt(' '), 0x120u);  // 'Ġ'
  EXPECT_EQ(BpeTokenizer::byte_to_cpt('A'), static_cast<uint32_t>('A'));
}

TEST(Bpe, SpecialTokensOnlyWhenAskedAndHiddenInOutput) {
  auto t = load("tokenizers/qwen3-hf/tokenizer.json");
  const int32_t im_start = t->vocab().find("<|im_start|>");
  ASSERT_GE(im_start, 0);
  const auto plain = t->encode("<|im_start|>user", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), im_start), 0);
  const auto special = t->encode("<|im_start|>user", false, true);
  ASSERT_FALSE(special.empty());
  EXPECT_EQ(special[0], im_start);
  EXPECT_EQ(t->token_bytes(im_start), "");
  EXPECT_EQ(t->token_bytes(im_start, true), "<|im_start|>");
  // Qwen's <think> tags are added tokens that are not special: always cut out of the text.
  const int32_t think = t->vocab().find("<think>");
  ASSERT_GE(think, 0);
  EXPECT_EQ(t->vocab().types[think], TokenType::UserDefined);
  const auto ids = t->encode("a<think>b", false, false);
  EXPECT_NE(std::find(ids.begin(), ids.end(), think), ids.end());
  EXPECT_EQ(t->token_bytes(think), "<think>");
}

TEST(Bpe, Llama3AddsBosAndRoundTrips) {
  auto t = load("tokenizers/llama3-hf/tokenizer.json");
  const auto ids = t->encode("Hello", true);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], 128000);
  EXPECT_EQ(t->vocab().pre, "llama3");
  const std::string text = "naïve café — 日本語 🦙\n\tcode(x) { return 1234567; }";
  StreamDecoder d(*t);
  std::string out;
  for (int32_t id : t->encode(text, false)) {
    const std::string piece = d.push(id);
    EXPECT_TRUE(utf8_valid(piece));
    out += piece;
  }
  EXPECT_EQ(out + d.flush(), text);
}

TEST(Bpe, UnknownPreTokenizerIsRefusedByName) {
  ModelFile mf = load_model_file(test::shared("tokenizers/llama.cpp-vocab/ggml-vocab-gpt-2.gguf"));
  mf.meta["tokenizer.ggml.pre"] = Value::of_str("martian");
  try {
    Tokenizer::create(mf);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("martian"), std::string::npos) << e.what();
  }
}

TEST(Wpm, BertNormalizationAndWordPieces) {
  using V = std::vector<std::string>;
  EXPECT_EQ(WpmTokenizer::split_words("Héllo, WORLD!\t日本", true),
            (V{"hello", ",", "world", "!", "日", "本"}));
  EXPECT_EQ(WpmTokenizer::split_words("a\x01\xef\xbf\xbd b", true), (V{"a", "b"}));
  auto t = load("tokenizers/llama.cpp-vocab/ggml-vocab-bert-bge.gguf");
  const auto ids = t->encode("unaffable", false);
  EXPECT_GT(ids.size(), 1u);  // split into word pieces
  std::string s;
  for (int32_t id : ids) s += t->token_bytes(id);
  EXPECT_EQ(s, " unaffable");
  StreamDecoder d(*t);
  std::string streamed;
  for (int32_t id : t->encode("Hello, World!", false)) streamed += d.push(id);
  EXPECT_EQ(streamed + d.flush(), "hello , world !");  // no leading space, as Hugging Face decodes
  // A word longer than 100 characters is unknown as a whole.
  EXPECT_EQ(t->encode(std::string(101, 'a'), false), std::vector<int32_t>{t->vocab().unk});
}

TEST(HfTokenizer, WordPieceJsonBecomesTheGgufSpelling) {
  test::TempDir dir;
  test::write_file(dir.file("tokenizer.json"), R"({
    "added_tokens": [{"id": 0, "content": "[UNK]", "special": true}],
    "normalizer": {"type": "BertNormalizer", "lowercase": true},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "vocab": {"[UNK]": 0, "play": 1, "##ing": 2, "!": 3}}})");
  auto t = Tokenizer::create(load_model_file(dir.file("tokenizer.json")));
  EXPECT_EQ(t->encode("Playing!", false), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(t->encode("xyz", false), std::vector<int32_t>{0});
}

TEST(HfTokenizer, MalformedFilesGiveOneLineErrors) {
  test::TempDir dir;
  const std::string p = dir.file("tokenizer.json");
  for (const char* bad : {R"({"model": {"type": "Unigram"}})", R"({"model": {"type": "BPE"}})",
                          R"({"model": {"type": "BPE", "vocab": {"a": 5, "b": 5}}})", "{not json",
                          R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
                              "pre_tokenizer": {"type": "Split", "behavior": "Removed",
                                                "pattern": {"Regex": "a"}}})"}) {
    test::write_file(p, bad);
    try {
      Tokenizer::create(load_model_file(p));
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace brisk
