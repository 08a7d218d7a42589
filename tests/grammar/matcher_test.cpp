// The byte-level matcher: UTF-8 lowering covers exactly the code points asked for; matching bytes
// agrees with the reference recognizer on random texts; a token mask equals what checking every
// token one by one gives (on a small made-up vocabulary and on Llama 3's 128K one) at every step of
// random walks through JSON, regular expressions and GBNF grammars; rollback and forks.
#include <gtest/gtest.h>

#include <random>

#include "formats/hf_tokenizer.h"
#include "grammar/json.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "grammar/recognizer.h"
#include "support/test_util.h"
#include "tokenizer/unicode.h"

namespace brisk::grammar {
namespace {

bool seq_matches(const ByteSeq& s, const std::string& enc) {
  if (s.size() != enc.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<uint8_t>(enc[i]);
    if (b < s[i].first || b > s[i].second) return false;
  }
  return true;
}

TEST(Utf8Lowering, EncodesExactlyTheCodePointsOfARange) {
  const std::vector<std::vector<CharRange>> cases = {
      {{0, 0x10FFFF}},    {{'a', 'z'}, {0xE9, 0xE9}}, {{0x7F, 0x800}},
      {{0xD000, 0xE100}}, {{0x10000, 0x10FFFF}},      {{0x3B1, 0x3C9}, {0x4E00, 0x9FFF}}};
  for (const auto& ranges : cases) {
    const auto seqs = utf8_sequences(ranges);
    for (uint32_t c = 0; c <= 0x10FFFF; c += (c < 0x11000 ? 1 : 97)) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      std::string enc;
      append_utf8(enc, c);
      bool in = false;
      for (const auto& r : ranges) in |= c >= r.lo && c <= r.hi;
      int hits = 0;
      for (const auto& s : seqs) hits += seq_matches(s, enc);
      ASSERT_EQ(hits, in ? 1 : 0) << std::hex << c;
    }
  }
}

// A made-up vocabulary: every string of one to three characters over a small alphabet (a byte
// of a multi-byte character included), and some longer pieces.
std::shared_ptr<TokenTrie> small_vocab() {
  const std::vector<std::string> alphabet = {"{", "}",  "\"", "a", ":", ",",    " ",    "1", "-",
                                             ".", "\\", "n",  "[", "]", "\xC3", "\xA9", "e"};
  std::vector<std::string> bytes = {""};  // id 0: the end-of-generation token
  for (const auto& x : alphabet) {
    bytes.push_back(x);
    for (const auto& y : alphabet) {
      bytes.push_back(x + y);
      for (const auto& z : alphabet) bytes.push_back(x + y + z);
    }
  }
  for (const char* s : {"{\"a\": ", "\": \"", "\"}", "null", "true", "false", "\xC3\xA9t\xC3\xA9"})
    bytes.push_back(s);
  return std::make_shared<TokenTrie>(std::move(bytes), std::vector<int32_t>{0});
}

// The mask against checking each token on its own, then a random allowed token taken; repeated.
void walk_and_compare(const Grammar& g, std::shared_ptr<const TokenTrie> trie, uint32_t seed,
                      int steps) {
  auto cg = std::make_shared<CompiledGrammar>(g, trie);
  Matcher m(cg);
  std::mt19937 rng(seed);
  std::vector<uint64_t> mask(trie->n_words());
  std::string text;
  for (int step = 0; step < steps; ++step) {
    m.fill_mask(mask.data());
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < trie->n_vocab(); ++t) {
      const bool bit = (mask[size_t(t) >> 6] >> (t & 63)) & 1;
      ASSERT_EQ(bit, m.allows(t)) << "token " << t << " '" << trie->bytes(t) << "' at step "
                                  << step;
      if (bit) allowed.push_back(t);
    }
    if (allowed.empty()) return;  // no token of this vocabulary continues it (n, but no ull)
    const int32_t t = allowed[rng() % allowed.size()];
    ASSERT_TRUE(m.accept(t));
    text += trie->bytes(t);
    if (m.ended()) return;
  }
}

const char* kArithmetic = R"g(root ::= expr
expr ::= term (("+" | "-") term)*
term ::= [0-9]+ | "(" expr ")" | "\"" [^"\\]* "\"")g";

TEST(Matcher, MasksEqualTokenByTokenChecksOnASmallVocabulary) {
  const auto trie = small_vocab();
  for (uint32_t seed = 0; seed < 20; ++seed) {
    walk_and_compare(json_grammar(), trie, seed, 40);
    walk_and_compare(parse_regex("\"(a|\\\\n|é)*\"[0-9]{1,3}"), trie, seed, 20);
    walk_and_compare(parse_gbnf("root ::= (\"a\" | \"aa\" | \"a\" \" \")* \"}\""), trie, seed, 20);
  }
}

TEST(Matcher, MasksEqualTokenByTokenChecksOnLlama3) {
  const auto tok = Tokenizer::create(
      load_hf_tokenizer_file(brisk::test::shared("tokenizers/llama3-hf/tokenizer.json")));
  const auto trie = std::make_shared<TokenTrie>(TokenTrie::from_tokenizer(*tok));
  for (uint32_t seed = 0; seed < 3; ++seed) {
    walk_and_compare(json_grammar(), trie, seed, 25);
    walk_and_compare(parse_gbnf(kArithmetic), trie, seed, 15);
  }
}

// Bounded repetitions share their positions' classifications down the chain (shared_positions.h),
// so the masks are compared at every depth of strings, digits and arrays that run to their limits.
const char* kBoundedSchema = R"({"type": "object", "properties": {
  "a": {"type": "string", "maxLength": 40},
  "b": {"type": "string", "minLength": 3, "maxLength": 30},
  "c": {"type": "array", "items": {"type": "string", "maxLength": 12}, "maxItems": 5},
  "d": {"type": "integer"}, "e": {"type": "number"}},
  "required": ["a", "b", "c", "d", "e"], "additionalProperties": false})";

TEST(Matcher, MasksOfBoundedRepetitionsEqualTokenByTokenChecks) {
  const auto small = small_vocab();
  for (uint32_t seed = 0; seed < 10; ++seed) {
    walk_and_compare(parse_regex("\"(a|\\\\n|é| ){2,40}\"[0-9]{1,12}"), small, seed, 40);
    walk_and_compare(parse_gbnf("root ::= (\"a\" | \"{\" | \"1\"){0,30} \"}\""), small, seed, 30);
  }
  const auto tok = Tokenizer::create(
      load_hf_tokenizer_file(brisk::test::shared("tokenizers/llama3-hf/tokenizer.json")));
  const auto trie = std::make_shared<TokenTrie>(TokenTrie::from_tokenizer(*tok));
  const Grammar schema = json_schema_grammar(nlohmann::ordered_json::parse(kBoundedSchema));
  for (uint32_t seed = 0; seed < 3; ++seed) walk_and_compare(schema, trie, seed, 60);
  walk_and_compare(parse_regex("[a-z ]{0,60}x"), trie, 7, 30);
}

// Keys other than an object's names (and strings other than some values) are tries whose nodes
// are marked open: a mask takes the plain tokens after their first letters whole, unproven by
// stepping (token_masks.h). Names share prefixes, end inside others, hold an escape and a
// non-ASCII character.
const char* kOpenKeysSchema = R"({"type": "object", "properties": {
  "cacheDir": {"type": "string"}, "cache": {"type": "boolean"},
  "cd": {"type": "string", "not": {"enum": ["ab", "abc", "b"]}}, "col\"or": {"type": "null"},
  "\u00e9t\u00e9": {"type": "array"}, "a": {"type": "number"}},
  "additionalProperties": {"type": "string", "maxLength": 3}})";

TEST(Matcher, MasksAtOpenKeysEqualTokenByTokenChecks) {
  const Grammar schema = json_schema_grammar(nlohmann::ordered_json::parse(kOpenKeysSchema));
  const auto small = small_vocab();
  for (uint32_t seed = 0; seed < 12; ++seed) walk_and_compare(schema, small, seed, 30);
  const auto tok = Tokenizer::create(
      load_hf_tokenizer_file(brisk::test::shared("tokenizers/llama3-hf/tokenizer.json")));
  const auto trie = std::make_shared<TokenTrie>(TokenTrie::from_tokenizer(*tok));
  for (uint32_t seed = 0; seed < 4; ++seed) walk_and_compare(schema, trie, seed, 20);
}

TEST(Matcher, BytesAgreeWithTheRecognizer) {
  const Grammar grammars[] = {json_grammar(), parse_gbnf(kArithmetic),
                              parse_regex("(ab|a)*b?[é-ü]{0,2}")};
  const std::string pieces[] = {"{", "}", "\"a\"", "1",  "+", "(", ")", ":",   ",", "ab",
                                "b", "é", "ü",     "\"", "[", "]", " ", "\\n", "ÿ"};
  std::mt19937 rng(5);
  for (const Grammar& g : grammars) {
    auto cg = std::make_shared<CompiledGrammar>(g, small_vocab());
    for (int i = 0; i < 2000; ++i) {
      std::string text;
      const int n = static_cast<int>(rng() % 8);
      for (int k = 0; k < n; ++k) text += pieces[rng() % std::size(pieces)];
      Matcher m(cg);
      const bool ours = m.accept_bytes(text) == text.size() && m.can_end();
      ASSERT_EQ(ours, test::accepts(g, text)) << text;
    }
  }
}

TEST(Matcher, RollbackAndForkKeepTheirState) {
  auto trie = small_vocab();
  auto cg = std::make_shared<CompiledGrammar>(json_grammar(), trie);
  Matcher m(cg);
  auto id = [&](const std::string& s) {
    for (int32_t t = 0; t < trie->n_vocab(); ++t)
      if (trie->bytes(t) == s) return t;
    return -1;
  };
  ASSERT_TRUE(m.accept(id("{\"a\": ")));
  Matcher fork = m;
  ASSERT_TRUE(m.accept(id("1")));
  ASSERT_TRUE(m.accept(id("}")));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(fork.can_end());
  EXPECT_FALSE(fork.allows(0));
  m.rollback(2);
  EXPECT_FALSE(m.allows(id("}")));
  EXPECT_TRUE(m.allows(id("\"")));
  EXPECT_TRUE(fork.accept(id("null")));
  EXPECT_TRUE(fork.accept(id("}")));
  EXPECT_TRUE(fork.accept(0));
  EXPECT_TRUE(fork.ended());
}

TEST(Matcher, ForcedBytesFollowTheOnlyWay) {
  auto cg = std::make_shared<CompiledGrammar>(
      parse_gbnf("root ::= \"{\\\"name\\\": \" [a-z]+ \"}\""), small_vocab());
  Matcher m(cg);
  EXPECT_EQ(m.forced_bytes(100), "{\"name\": ");
  EXPECT_EQ(m.forced_bytes(3), "{\"n");
  m.accept_bytes("{\"name\": ab");
  EXPECT_EQ(m.forced_bytes(100), "");
}

}  // namespace
}  // namespace brisk::grammar
