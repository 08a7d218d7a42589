// The JSON Schema compiler beyond the official suite: numeric bounds checked exhaustively against
// arithmetic, string lengths, the order properties are generated in, keys an object may add,
// recursion, and refusals that name the keyword.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>

#include "core/error.h"
#include "grammar/json_schema.h"
#include "grammar/matcher.h"
#include "grammar/recognizer.h"

namespace brisk::grammar {
namespace {

using ojson = nlohmann::ordered_json;

bool accepts(const ojson& schema, const std::string& text) {
  return test::accepts(json_schema_grammar(schema), text);
}

// Every pair of bounds, each inclusive or exclusive, against each text: the grammar accepts a text
// exactly when its double is within the bounds (and, for integers, whole); a schema refused as
// unsatisfiable must be one no text satisfies.
template <typename T>
void expect_bounds_agree(const char* type, const std::vector<T>& bounds,
                         const std::vector<std::string>& texts) {
  const bool integer = std::string(type) == "integer";
  for (T lo : bounds)
    for (T hi : bounds)
      for (int flags = 0; flags < 4; ++flags) {
        ojson s = {{"type", type}};
        s[flags & 1 ? "exclusiveMinimum" : "minimum"] = lo;
        s[flags & 2 ? "exclusiveMaximum" : "maximum"] = hi;
        auto fits = [&](const std::string& t) {
          const double x = std::stod(t);
          return (flags & 1 ? x > lo : x >= lo) && (flags & 2 ? x < hi : x <= hi) &&
                 (!integer || x == std::floor(x));
        };
        Grammar g;
        try {
          g = json_schema_grammar(s);
        } catch (const Error&) {
          for (const std::string& t : texts)
            ASSERT_FALSE(fits(t)) << s.dump() << " refused but " << t << " fits";
          continue;
        }
        for (const std::string& t : texts)
          ASSERT_EQ(test::accepts(g, t), fits(t)) << s.dump() << " on " << t;
      }
}

TEST(JsonSchema, NumericBoundsAgreeWithArithmetic) {
  const std::vector<std::string> texts = {
      "0",  "-0.5", "0.5", "1",  "1.0", "2.25",   "-1",   "-1.5",  "-2",  "-2.0", "9",
      "10", "10.5", "11",  "99", "100", "100.01", "-100", "-99.9", "101", "-101", "7.000"};
  const std::vector<int> bounds = {-100, -2, -1, 0, 1, 2, 10, 100};
  for (const char* type : {"number", "integer"}) expect_bounds_agree(type, bounds, texts);
}

// Fractional bounds on numbers: a text is accepted exactly when the double a validator parses
// from it is within the bounds (texts of up to 15 significant digits, where the two agree).
TEST(JsonSchema, FractionalNumberBoundsAgreeWithDoubles) {
  const std::vector<std::string> texts = {
      "0",     "0.1",   "0.09",  "0.11",   "0.10",  "0.25",   "0.2",   "0.3",    "-0.1", "-0.25",
      "-0.3",  "1",     "1.5",   "1.49",   "1.51",  "1.500",  "2",     "-1.5",   "-2.5", "2.5",
      "2.499", "2.501", "-2.49", "-2.501", "0.001", "-0.001", "12.75", "3.14159"};
  expect_bounds_agree(
      "number", std::vector<double>{-2.5, -1.5, -0.25, -0.1, 0, 0.1, 0.25, 1.5, 2.5, 12.75}, texts);
  // Texts a validator rounds onto an exclusive bound are refused, however many digits they have.
  EXPECT_FALSE(accepts({{"type", "number"}, {"exclusiveMaximum", 1}}, "0.99999999999999999999"));
  EXPECT_TRUE(accepts({{"type", "number"}, {"exclusiveMaximum", 1}}, "0.9999999999999"));
  EXPECT_FALSE(accepts({{"type", "number"}, {"exclusiveMinimum", 1}}, "1.00000000000000000001"));
  EXPECT_TRUE(accepts({{"type", "number"}, {"exclusiveMinimum", 0}}, "0.00000000000000000001"));
  EXPECT_FALSE(accepts({{"type", "number"}, {"exclusiveMinimum", 0}}, "0.00000000000000000000"));
  EXPECT_TRUE(accepts({{"type", "number"}, {"minimum", 1e-5}}, "0.00001"));
  EXPECT_FALSE(accepts({{"type", "number"}, {"minimum", 1e-5}}, "0.000009"));
  EXPECT_TRUE(accepts({{"type", "number"}, {"maximum", 1.5e3}}, "1500.0"));
}

TEST(JsonSchema, StringLengthsCountCharactersNotBytes) {
  const ojson s = {{"type", "string"}, {"minLength", 2}, {"maxLength", 3}};
  EXPECT_FALSE(accepts(s, "\"a\""));
  EXPECT_TRUE(accepts(s, "\"ab\""));
  EXPECT_TRUE(accepts(s, "\"é\\n\""));
  EXPECT_TRUE(accepts(s, "\"a\\u00e9c\""));
  EXPECT_FALSE(accepts(s, "\"abcd\""));
  EXPECT_FALSE(accepts(s, "\"\\ud83d\\ude00\""));  // one character written as two escapes
}

// The byte-level matcher over single-byte tokens (the recognizer above recurses per character,
// too deep for strings of 20,000 characters): whether it takes the whole text and may end there.
std::shared_ptr<const CompiledGrammar> compiled(const ojson& schema) {
  std::vector<std::string> bytes = {""};
  for (int b = 0; b < 256; ++b) bytes.push_back(std::string(1, static_cast<char>(b)));
  auto trie = std::make_shared<TokenTrie>(std::move(bytes), std::vector<int32_t>{0});
  return std::make_shared<CompiledGrammar>(json_schema_grammar(schema), trie);
}
bool matches(const std::shared_ptr<const CompiledGrammar>& g, const std::string& text) {
  Matcher m(g);
  return m.accept_bytes(text) == text.size() && m.can_end();
}

// Long bounds are counted in blocks of rules rather than one rule per character: every length
// around the bounds and the block edges is judged right, with escapes and multi-byte characters
// counted as one, and a bound of four billion compiles to a small grammar.
TEST(JsonSchema, LongStringLengthsAreCountedWithoutUnrolling) {
  const std::vector<std::string> pieces = {"a", "\\n", "\xC3\xA9", "\\u00e9", "\xF0\x9F\x98\x80",
                                           " "};
  auto text = [&](uint32_t n) {
    std::string t = "\"";
    for (uint32_t i = 0; i < n; ++i) t += pieces[(i * 7 + n) % pieces.size()];
    return t + "\"";
  };
  const std::vector<std::pair<uint32_t, uint32_t>> bounds = {{0, 257},   {0, 300},     {0, 511},
                                                             {0, 512},   {3, 1000},    {256, 256},
                                                             {257, 513}, {1000, 1000}, {0, 20000}};
  for (auto [lo, hi] : bounds) {
    const auto g = compiled({{"type", "string"}, {"minLength", lo}, {"maxLength", hi}});
    std::vector<uint32_t> lengths = {hi, hi + 1};  // each character of a long text costs a step
    if (hi <= 1000) lengths.insert(lengths.end(), {lo, 255, 256, 257, 511, 512, 513, 767, 768});
    if (hi <= 1000 && lo > 0) lengths.push_back(lo - 1);
    if (hi <= 1000 && hi > lo) lengths.push_back(hi - 1), lengths.push_back(lo + 1);
    for (uint32_t n : lengths)
      EXPECT_EQ(matches(g, text(n)), n >= lo && n <= hi) << lo << ".." << hi << ", length " << n;
  }
  const ojson huge = {{"type", "string"}, {"maxLength", 4000000000u}};
  EXPECT_LT(json_schema_grammar(huge).rules().size(), 20000u);
  EXPECT_TRUE(matches(compiled(huge), text(20000)));
  const auto least = compiled({{"type", "string"}, {"minLength", 20000}});
  EXPECT_FALSE(matches(least, text(19999)));
  EXPECT_TRUE(matches(least, text(20001)));
}

// A pattern (or format) beside lengths: on random strings the grammar agrees with the pattern
// alone and a count of the characters, escapes and multi-byte characters counted as one.
TEST(JsonSchema, PatternsAndFormatsWithLengthsAgreeWithBothChecks) {
  const std::vector<std::string> patterns = {"^[a-z0-9-]+$", "b",     "^(ab|c)*$", "^[^c]*a.$",
                                             "^a{2,4}$",     "é|\\n", "^.+$"};
  const std::vector<std::pair<uint32_t, std::optional<uint32_t>>> bounds = {
      {1, std::nullopt}, {0, 3}, {2, 5}, {3, 3}, {4, std::nullopt}, {6, 8}};
  const std::vector<std::string> pieces = {"a", "b", "c", "-", "0", "\\n", "\xC3\xA9", "\\u00e9"};
  std::mt19937 rng(7);
  for (const std::string& p : patterns) {
    const ojson alone = {{"type", "string"}, {"pattern", p}};
    for (auto [lo, hi] : bounds) {
      ojson s = alone;
      s["minLength"] = lo;
      if (hi) s["maxLength"] = *hi;
      std::optional<Grammar> g;
      try {
        g = json_schema_grammar(s);
      } catch (const Error&) {  // no string fits both: none of the texts below may
      }
      for (int k = 0; k < 60; ++k) {
        std::string text = "\"";
        const uint32_t n = rng() % 10;
        for (uint32_t i = 0; i < n; ++i) text += pieces[rng() % pieces.size()];
        text += "\"";
        const bool want = accepts(alone, text) && n >= lo && (!hi || n <= *hi);
        EXPECT_EQ(g && test::accepts(*g, text), want) << p << " " << lo << " " << text;
      }
    }
  }
  const ojson date = {{"type", "string"}, {"format", "date"}, {"maxLength", 10}};
  EXPECT_TRUE(accepts(date, R"("2024-02-29")"));
  // A pattern beside a format: the strings both match.
  const ojson dated = {{"type", "string"}, {"format", "date"}, {"pattern", "^2024-0[1-6]"}};
  EXPECT_TRUE(accepts(dated, R"("2024-02-29")"));
  for (const char* t : {R"("2023-02-01")", R"("2024-07-01")", R"("2024-02-30x")", R"("2024-0")"})
    EXPECT_FALSE(accepts(dated, t)) << t;
  EXPECT_THROW(json_schema_grammar({{"type", "string"}, {"format", "date"}, {"pattern", "^x"}}),
               Error);
  // A date has ten characters: none is nine or fewer.
  EXPECT_THROW(json_schema_grammar({{"type", "string"}, {"format", "date"}, {"maxLength", 9}}),
               Error);
}

TEST(JsonSchema, PropertiesComeInTheSchemasOrderAndExtraKeysAreNew) {
  const ojson s = ojson::parse(R"({"type": "object",
      "properties": {"b": {"type": "integer"}, "a": {"type": "string"}},
      "required": ["a"], "additionalProperties": {"type": "boolean"}})");
  EXPECT_TRUE(accepts(s, R"({"b": 1, "a": "x"})"));
  EXPECT_TRUE(accepts(s, R"({"a": "x"})"));
  EXPECT_FALSE(accepts(s, R"({"a": "x", "b": 1})"));  // not in the schema's order
  EXPECT_FALSE(accepts(s, R"({"b": 1})"));            // a is required
  EXPECT_TRUE(accepts(s, R"({"a": "x", "c": true, "bb": false})"));
  EXPECT_FALSE(accepts(s, R"({"a": "x", "b": true})"));  // b is declared, not an extra key
  EXPECT_FALSE(accepts(s, R"({"a": "x", "c": 1})"));
}

// patternProperties beside additionalProperties: a key takes the schemas of every pattern it
// matches, additionalProperties' when it matches none; a key matching patterns whose schemas
// exclude each other cannot be written.
TEST(JsonSchema, PatternPropertiesBesideAdditionalProperties) {
  const ojson s = ojson::parse(R"({"type": "object", "properties": {"name": {"type": "string"}},
      "patternProperties": {"^x-": {"type": "integer"}, "^y": {"type": "boolean"},
                            "z$": {"type": "string"}},
      "additionalProperties": {"type": "null"}})");
  for (const char* t : {R"({"name": "a", "x-1": 1})", R"({"yes": true, "other": null})",
                        R"({"x-é\"q": 2, "az": "s"})", R"({"name": "n", "x-": 3, "w": null})"})
    EXPECT_TRUE(accepts(s, t)) << t;
  for (const char* t : {R"({"x-1": "s"})", R"({"yz": true})", R"({"yz": "s"})", R"({"other": 1})",
                        R"({"name": 1})"})
    EXPECT_FALSE(accepts(s, t)) << t;
  const ojson closed = ojson::parse(R"({"type": "object",
      "patternProperties": {"^a": {"type": "integer"}, "^b": {"type": "string"}},
      "additionalProperties": false})");
  EXPECT_TRUE(accepts(closed, R"({"a1": 1, "b1": "s"})"));
  EXPECT_FALSE(accepts(closed, R"({"a1": "s"})"));
  EXPECT_FALSE(accepts(closed, R"({"c": 1})"));
}

// propertyNames: every key, declared or extra, is a name its schema accepts.
TEST(JsonSchema, PropertyNamesCutTheKeys) {
  const ojson pattern = ojson::parse(R"({"type": "object", "propertyNames": {"pattern": "^[a-z]+$"},
      "additionalProperties": {"type": "integer"}})");
  for (const char* t : {R"({"abc": 1})", R"({})", R"({"a": 1, "zz": 2})"})
    EXPECT_TRUE(accepts(pattern, t)) << t;
  for (const char* t : {R"({"aB": 1})", R"({"": 1})", R"({"a1": 1})"})
    EXPECT_FALSE(accepts(pattern, t)) << t;
  const ojson lengths = ojson::parse(R"({"type": "object", "propertyNames": {"maxLength": 3},
      "properties": {"ab": {"type": "string"}, "long": {"type": "string"}}})");
  EXPECT_TRUE(accepts(lengths, R"({"ab": "x", "xyz": 1})"));
  EXPECT_FALSE(accepts(lengths, R"({"long": "x"})"));
  EXPECT_FALSE(accepts(lengths, R"({"wxyz": 1})"));
  ojson needs_long = lengths;
  needs_long["required"] = {"long"};
  EXPECT_THROW(json_schema_grammar(needs_long), Error);  // no object satisfies it
  const ojson listed = ojson::parse(R"({"type": "object", "$defs": {"k": {"enum": ["a", "b", "ccc"],
      "maxLength": 2}}, "propertyNames": {"$ref": "#/$defs/k"}})");
  EXPECT_TRUE(accepts(listed, R"({"a": 1, "b": [2]})"));
  EXPECT_FALSE(accepts(listed, R"({"ccc": 1})"));
  EXPECT_FALSE(accepts(listed, R"({"c": 1})"));
  const ojson none = {{"type", "object"}, {"propertyNames", false}};
  EXPECT_TRUE(accepts(none, "{}"));
  EXPECT_FALSE(accepts(none, R"({"a": 1})"));
  const ojson any = ojson::parse(R"({"type": "object", "propertyNames": {"type": "string"}})");
  EXPECT_TRUE(accepts(any, R"({"any key": null})"));
  const ojson unread =
      ojson::parse(R"({"type": "object", "propertyNames": {"not": {"const": "x"}}})");
  EXPECT_THROW(json_schema_grammar(unread), Error);
}

TEST(JsonSchema, RecursiveReferences) {
  const ojson s = ojson::parse(R"({"$defs": {"node": {"type": "object",
      "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/node"}},
      "required": ["v"], "additionalProperties": false}}, "$ref": "#/$defs/node"})");
  EXPECT_TRUE(accepts(s, R"({"v": 1, "next": {"v": 2, "next": {"v": 3}}})"));
  EXPECT_FALSE(accepts(s, R"({"v": 1, "next": {"next": {"v": 3}}})"));
}

TEST(JsonSchema, RefusalsNameTheKeyword) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"not": {"type": "string", "pattern": "^a"}})", "'not'"},
      {R"({"if": {"pattern": "^a"}, "then": {"maxLength": 3}})", "'if'"},
      {R"({"type": "array", "uniqueItems": true})", "'uniqueItems'"},
      {R"({"type": "number", "multipleOf": 3})", "'multipleOf'"},
      {R"({"oneOf": [{"type": "integer"}, {"type": "number"}]})", "oneOf"},
      {R"({"$ref": "other.json#/x"})", "other.json"},
      {R"({"type": "string", "format": "idn-email"})", "'idn-email'"},
      {R"({"type": "string", "pattern": "(a)\\1"})", "backreference"},
  };
  for (const auto& [schema, word] : cases) {
    try {
      json_schema_grammar(ojson::parse(schema));
      ADD_FAILURE() << schema << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace brisk::grammar

namespace brisk::grammar {
namespace {

// uniqueItems over a few known values: each array holds each value at most once, in any order.
// enum and const beside other keywords keep the values those keywords accept, each keyword
// checked apart where they cannot be compiled together (a length beside a pattern).
TEST(JsonSchema, EnumValuesAreFilteredByTheOtherKeywords) {
  const ojson s = ojson::parse(R"({"type": "string", "enum": ["a", "abc", "ab1", "abcdef"],
      "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"})");
  EXPECT_TRUE(accepts(s, R"("abc")"));
  for (const char* t : {R"("a")", R"("ab1")", R"("abcdef")"}) EXPECT_FALSE(accepts(s, t)) << t;
  const ojson n = ojson::parse(R"({"enum": [1, 5, 10, "x"], "maximum": 6})");
  for (const char* t : {"1", "5", R"("x")"}) EXPECT_TRUE(accepts(n, t)) << t;
  EXPECT_FALSE(accepts(n, "10"));
  const ojson c = ojson::parse(R"({"const": "abc", "maxLength": 2})");
  EXPECT_THROW(json_schema_grammar(c), Error);  // no value left: unsatisfiable
}

TEST(JsonSchema, UniqueItemsOverKnownValues) {
  const ojson s = {{"type", "array"},
                   {"items", {{"enum", {"a", "b", "c"}}}},
                   {"uniqueItems", true},
                   {"minItems", 1}};
  const Grammar g = json_schema_grammar(s);
  for (const char* ok : {R"(["a"])", R"(["c", "a"])", R"(["b", "c", "a"])"})
    EXPECT_TRUE(test::accepts(g, ok)) << ok;
  for (const char* bad : {"[]", R"(["a", "a"])", R"(["a", "b", "a"])", R"(["d"])"})
    EXPECT_FALSE(test::accepts(g, bad)) << bad;
  const Grammar b = json_schema_grammar(
      {{"type", "array"}, {"items", {{"type", "boolean"}}}, {"uniqueItems", true}});
  EXPECT_TRUE(test::accepts(b, "[true, false]"));
  EXPECT_FALSE(test::accepts(b, "[true, true]"));
  // Through a $ref, and with a const.
  const ojson r = ojson::parse(
      R"({"$defs": {"c": {"enum": [1, 2]}}, "type": "array", "items": {"$ref": "#/$defs/c"},
          "uniqueItems": true, "maxItems": 5})");
  EXPECT_TRUE(test::accepts(json_schema_grammar(r), "[2, 1]"));
  EXPECT_FALSE(test::accepts(json_schema_grammar(r), "[2, 2]"));
  // Refused by name: values not known in advance, or too many of them.
  for (const ojson& refused :
       {ojson{{"type", "array"}, {"items", {{"type", "string"}}}, {"uniqueItems", true}},
        ojson{{"type", "array"},
              {"items", {{"enum", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}}},
              {"uniqueItems", true}}}) {
    try {
      json_schema_grammar(refused);
      ADD_FAILURE() << refused.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("uniqueItems"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace brisk::grammar

namespace brisk::grammar {
namespace {

// `not` over the keywords whose complement is a schema, and if/then/else as anyOf of the two
// cases; each text is accepted exactly when a validator would (worked out by hand here; the
// official suite's not and if-then-else files check the same through the matcher).
// Real schemas repeat themselves: hundreds of objects that allow extra keys beside their own
// names, numbers with the same bounds, long maxLength bounds, allOf of many conditionals. Their
// grammars must grow with what the schema says, not with how often it says it (compile time and
// each position's first classification follow the grammar's size), and stay exact.
TEST(JsonSchema, RepeatedShapesShareTheirRules) {
  std::mt19937 rng(7);
  auto word = [&] {
    std::string w;
    for (int i = 0; i < 4 + static_cast<int>(rng() % 12); ++i)
      w += static_cast<char>('a' + rng() % 26);
    return w;
  };
  ojson objects = ojson::object();
  std::vector<std::string> names;
  size_t name_chars = 0;
  for (int o = 0; o < 60; ++o) {
    ojson props = ojson::object();
    for (int p = 0; p < 10; ++p) {
      const std::string n = word() + "Id";
      props[n] = {{"type", "integer"}, {"minimum", 0}};
      names.push_back(n);
      name_chars += n.size();
    }
    objects["o" + std::to_string(o)] = {{"type", "object"}, {"properties", props}};
  }
  const ojson wide = {{"type", "object"}, {"properties", objects}};
  const Grammar g = json_schema_grammar(wide);
  EXPECT_LT(g.n_symbols(), 10 * name_chars + 60 * 150) << "names: " << name_chars << " chars";
  const auto cg = compiled({{"type", "object"}, {"properties", objects["o0"]["properties"]}});
  const std::string own = objects["o0"]["properties"].begin().key();
  EXPECT_TRUE(matches(cg, "{\"" + own + "\":3}"));
  EXPECT_FALSE(matches(cg, "{\"" + own + "\":-3}"));  // its own schema, not the extra keys'
  EXPECT_TRUE(matches(cg, "{\"" + own.substr(0, own.size() - 1) + "\":-3}"));
  EXPECT_TRUE(matches(cg, "{\"" + own + "x\":\"s\"}"));
  EXPECT_TRUE(matches(cg, "{\"\u00e9" + own + "\":null}"));
  // Long bounds share one block of characters.
  ojson lengths = ojson::object();
  for (int i = 0; i < 20; ++i)
    lengths["s" + std::to_string(i)] = {{"type", "string"}, {"maxLength", 300 + 97 * i}};
  EXPECT_LT(json_schema_grammar({{"type", "object"}, {"properties", lengths}}).n_symbols(), 12000u);
  // Eight conditionals on one discriminator: their cases are paired and merged once each.
  ojson conds = ojson::array();
  ojson kinds = ojson::array();
  for (int i = 0; i < 8; ++i) {
    const std::string k = "k" + std::to_string(i);
    kinds.push_back(k);
    conds.push_back({{"if", {{"properties", {{"kind", {{"const", k}}}}}}},
                     {"then", {{"properties", {{"n", {{"maximum", i}}}}}}}});
  }
  const ojson chain = {{"type", "object"},
                       {"properties", {{"kind", {{"enum", kinds}}}, {"n", {{"type", "integer"}}}}},
                       {"required", {"kind", "n"}},
                       {"additionalProperties", false},
                       {"allOf", conds}};
  const auto cc = compiled(chain);
  for (int i = 0; i < 8; ++i) {
    const std::string k = "{\"kind\":\"k" + std::to_string(i) + "\",\"n\":";
    EXPECT_TRUE(matches(cc, k + std::to_string(i) + "}")) << i;
    EXPECT_FALSE(matches(cc, k + std::to_string(i + 1) + "}")) << i;
  }
}

TEST(JsonSchema, NotAndIfThenElse) {
  const struct {
    const char* schema;
    std::vector<const char*> valid, invalid;
  } cases[] = {
      {R"({"type": "string", "not": {"enum": ["a", "b"]}})",
       {R"("c")", R"("ab")", R"("")"},
       {R"("a")", R"("b")", "1"}},
      {R"({"not": {"type": ["string", "object", "array"]}})",
       {"1", "null", "true", "2.5"},
       {R"("x")", "{}", "[]"}},
      {R"({"type": "object", "not": {"required": ["a"]}})",
       {"{}", R"({"b": 1})"},
       {R"({"a": 1})", R"({"b": 1, "a": 2})"}},
      {R"({"type": "integer", "not": {"minimum": 10}})", {"9", "-3"}, {"10", "11"}},
      {R"({"type": "string", "not": {"maxLength": 2}})", {R"("abc")"}, {R"("ab")", R"("")"}},
      {R"({"not": {"anyOf": [{"type": "string"}, {"type": "number"}]}})",
       {"null", "[]"},
       {R"("s")", "1"}},
      {R"({"type": "object", "properties": {"k": {"type": "string"}},
           "if": {"properties": {"k": {"const": "num"}}, "required": ["k"]},
           "then": {"properties": {"v": {"type": "integer"}}, "required": ["v"]},
           "else": {"properties": {"v": {"type": "string"}}}})",
       {R"({"k": "num", "v": 3})", R"({"k": "txt", "v": "x"})", R"({"k": "txt"})", R"({})",
        R"({"v": "y"})"},
       {R"({"k": "num", "v": "x"})", R"({"k": "num"})", R"({"k": "txt", "v": 3})", R"({"v": 3})"}},
      {R"({"if": {"type": "string"}, "then": {"maxLength": 2}, "else": {"type": "boolean"}})",
       {R"("ab")", "true"},
       {R"("abc")", "1", "null"}},
      // allOf of conditionals, of anyOf and of not: merged by pairing their cases.
      {R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
           "allOf": [{"if": {"required": ["a"]}, "then": {"required": ["b"]}},
                     {"if": {"required": ["b"]}, "then": {"properties": {"b": {"maximum": 5}}}}]})",
       {R"({})", R"({"a": 1, "b": 2})", R"({"b": 3})"},
       {R"({"a": 1})", R"({"a": 1, "b": 9})"}},
      {R"({"allOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]},
                     {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}]})",
       {"3"},
       {R"("s")", "true", "null"}},
      {R"({"type": "string", "allOf": [{"not": {"const": "a"}}, {"not": {"const": "b"}}]})",
       {R"("c")"},
       {R"("a")", R"("b")"}},
      // Dependencies: a name present brings others, or a schema, with it.
      {R"({"type": "object", "properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"]}})",
       {"{}", R"({"b": 1})", R"({"a": 1, "b": 2})"},
       {R"({"a": 1})"}},
      {R"({"type": "object", "dependencies": {"a": {"properties": {"n": {"type": "integer"}}, "required": ["n"]}}})",
       {"{}", R"({"n": "x"})", R"({"a": 0, "n": 3})"},
       {R"({"a": 0})", R"({"a": 0, "n": "x"})"}},
      // minProperties and maxProperties: the members counted.
      {R"({"type": "object", "properties": {"a": {}, "b": {}}, "minProperties": 1, "maxProperties": 2})",
       {R"({"a": 1})", R"({"b": 1})", R"({"a": 1, "b": 2})", R"({"x": 1})", R"({"a": 1, "x": 1})"},
       {"{}", R"({"a": 1, "b": 2, "x": 3})", R"({"x": 1, "y": 2, "z": 3})"}},
      {R"({"type": "object", "required": ["a"], "properties": {"a": {}}, "maxProperties": 1})",
       {R"({"a": 1})"},
       {"{}", R"({"a": 1, "x": 2})"}},
      {R"({"type": "object", "minProperties": 2})",
       {R"({"a": 1, "b": 2})", R"({"a": 1, "b": 2, "c": 3})"},
       {"{}", R"({"a": 1})"}},
      // oneOf whose branches overlap: each branch without the others.
      {R"({"type": "object", "properties": {"build": {"type": "string"}, "image": {"type": "string"}},
           "oneOf": [{"required": ["build"]}, {"required": ["image"]}]})",
       {R"({"build": "x"})", R"({"image": "y"})"},
       {R"({})", R"({"build": "x", "image": "y"})"}},
      {R"({"oneOf": [{"enum": ["HTTP", "HTTPS"]}, {"type": "string", "pattern": "^\\[.*\\]$"}]})",
       {R"("HTTP")", R"("[y]")", R"("[x]")"},
       {R"("ftp")"}},
      {R"({"oneOf": [{"type": "string"}, {"enum": ["a", 1]}]})", {R"("b")", "1"}, {R"("a")", "2"}},
  };
  for (const auto& c : cases) {
    const Grammar g = json_schema_grammar(ojson::parse(c.schema));
    for (const char* v : c.valid) EXPECT_TRUE(test::accepts(g, v)) << c.schema << " on " << v;
    for (const char* v : c.invalid) EXPECT_FALSE(test::accepts(g, v)) << c.schema << " on " << v;
  }
}

}  // namespace
}  // namespace brisk::grammar
