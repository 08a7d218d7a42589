// JSON as a grammar: on random texts over JSON's alphabet it accepts exactly what a JSON parser
// (nlohmann::json::accept) accepts, whitespace runs within the bound; the object-only form, the
// compact style and the bound itself.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "grammar/json.h"
#include "grammar/recognizer.h"

namespace brisk::grammar {
namespace {

using test::accepts;

// The longest run of JSON whitespace in s.
size_t longest_space_run(const std::string& s) {
  size_t best = 0, run = 0;
  for (char c : s) {
    run = (c == ' ' || c == '\t' || c == '\n' || c == '\r') ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

TEST(JsonGrammar, AgreesWithAJsonParserOnRandomTexts) {
  const Grammar g = json_grammar();
  const std::string pieces[] = {"{",  "}",     "[",       "]",    ",",    ":",  " ",
                                "\n", "\"a\"", "\"\\n\"", "\"",   "1",    "-",  "0",
                                ".5", "e3",    "true",    "null", "fals", "\\", "x"};
  std::mt19937 rng(11);
  int valid = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 9);
    for (int k = 0; k < n; ++k) text += pieces[rng() % std::size(pieces)];
    if (longest_space_run(text) > 20) continue;
    const bool want = nlohmann::json::accept(text);
    valid += want;
    EXPECT_EQ(accepts(g, text), want) << "'" << text << "'";
  }
  EXPECT_GT(valid, 100);  // the texts reach both verdicts
}

TEST(JsonGrammar, DocumentsObjectsCompactAndTheWhitespaceBound) {
  const std::string doc = R"({
  "name": "brisk",
  "tags": ["fast", "C++"],
  "score": -1.5e-3,
  "nested": {"ok": true, "none": null, "esc": "\"\\\/\b\f\n\r\t\u00e9"}
})";
  EXPECT_TRUE(accepts(json_grammar(), doc));
  EXPECT_TRUE(accepts(json_grammar({}, true), doc));
  EXPECT_FALSE(accepts(json_grammar({}, true), "[1, 2]"));
  EXPECT_TRUE(accepts(json_grammar(), "[1, 2]"));
  JsonStyle compact;
  compact.compact = true;
  EXPECT_FALSE(accepts(json_grammar(compact), doc));
  EXPECT_TRUE(accepts(json_grammar(compact), nlohmann::json::parse(doc).dump()));
  const std::string padded = "[1," + std::string(21, ' ') + "2]";
  EXPECT_FALSE(accepts(json_grammar(), padded));
  JsonStyle wide;
  wide.max_whitespace = 30;
  EXPECT_TRUE(accepts(json_grammar(wide), padded));
  EXPECT_TRUE(accepts(json_grammar(), "\"caf\xC3\xA9 \xF0\x9F\x8E\x89\""));
}

}  // namespace
}  // namespace brisk::grammar
