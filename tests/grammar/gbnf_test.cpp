// GBNF parsing into the grammar form every constraint compiles to: the language each grammar
// accepts (checked with a small memoized matcher, exact for the grammars check() accepts, which
// have no left recursion), the lowering of repetitions, and one-line errors with positions.
#include <gtest/gtest.h>

#include "core/error.h"
#include "grammar/grammar.h"
#include "grammar/recognizer.h"

namespace brisk::grammar {
namespace {

using test::accepts;

std::string error_of(const std::string& gbnf, const Limits& limits = {}) {
  try {
    (void)parse_gbnf(gbnf, limits);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Gbnf, LiteralsClassesGroupsAndRepetitions) {
  const Grammar g = parse_gbnf(R"(root ::= "a" [b-d]* ("x" | "yz")+ "!"?)");
  for (const char* ok : {"ax", "abdcyzx!", "ayzyz", "ax!"}) EXPECT_TRUE(accepts(g, ok)) << ok;
  for (const char* bad : {"a", "x", "aex", "ax!!", "abx?", ""})
    EXPECT_FALSE(accepts(g, bad)) << bad;
}

TEST(Gbnf, BoundedRepetitions) {
  const Grammar two_three = parse_gbnf(R"(root ::= "a"{2,3})");
  const Grammar at_least = parse_gbnf(R"(root ::= "a"{2,})");
  const Grammar at_most = parse_gbnf(R"(root ::= "a"{,2} "b")");
  const Grammar exactly = parse_gbnf(R"(root ::= ("ab"){3})");
  for (int n = 0; n < 6; ++n) {
    const std::string a(static_cast<size_t>(n), 'a');
    EXPECT_EQ(accepts(two_three, a), n == 2 || n == 3) << n;
    EXPECT_EQ(accepts(at_least, a), n >= 2) << n;
    EXPECT_EQ(accepts(at_most, a + "b"), n <= 2) << n;
  }
  EXPECT_TRUE(accepts(exactly, "ababab"));
  EXPECT_FALSE(accepts(exactly, "abab"));
  EXPECT_FALSE(accepts(exactly, "abababab"));
}

TEST(Gbnf, ClassesEscapesAndUnicode) {
  const Grammar g = parse_gbnf(R"(root ::= "\"" ( [^"\\] | "\\" ["\\nt] )* "\"")");
  EXPECT_TRUE(accepts(g, R"("plain")"));
  EXPECT_TRUE(accepts(g, R"("esc\"aped\\ and \n")"));
  EXPECT_TRUE(accepts(g, "\"caf\xC3\xA9 \xF0\x9F\x8E\x89\""));
  EXPECT_FALSE(accepts(g, R"("open)"));
  EXPECT_FALSE(accepts(g, R"("bad\q")"));
  const Grammar u = parse_gbnf("root ::= \"\\u00e9\" [\\x41-\\x43] \"\xE2\x82\xAC\" [\\U0001F389]");
  EXPECT_TRUE(accepts(u,
                      "\xC3\xA9"
                      "B"
                      "\xE2\x82\xAC"
                      "\xF0\x9F\x8E\x89"));
  EXPECT_FALSE(accepts(u,
                       "\xC3\xA9"
                       "D"
                       "\xE2\x82\xAC"
                       "\xF0\x9F\x8E\x89"));
  const Grammar any = parse_gbnf("root ::= . .");
  EXPECT_TRUE(accepts(any, "\n\xE4\xB8\xAD"));
  EXPECT_FALSE(accepts(any, "x"));
}

TEST(Gbnf, RulesAcrossLinesWithComments) {
  const char* json = R"(# A JSON value, with rules referred to before they are defined.
root   ::= value
value  ::= object | array | string | number | ("true" | "false" | "null")
object ::=
  "{" ws (
    string ws ":" ws value ws
    ("," ws string ws ":" ws value ws)*  # more members
  )? "}"
array  ::= "[" ws ( value ws ("," ws value ws)* )? "]"
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\""
number ::= "-"? ([0-9] | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
ws     ::= [ \t\n]*
)";
  const Grammar g = parse_gbnf(json);
  for (const char* ok :
       {R"({"a": [1, 2.5e3, -0.1], "b": {"c": null}})", "[]", "true", R"("\u00e9\n")", "-12"})
    EXPECT_TRUE(accepts(g, ok)) << ok;
  for (const char* bad : {R"({"a" 1})", "[1,]", "01", R"("\x")", "tru"})
    EXPECT_FALSE(accepts(g, bad)) << bad;
  const Grammar alts = parse_gbnf("root ::= \"a\"\n       | \"b\"\n\nother ::= \"c\"");
  EXPECT_TRUE(accepts(alts, "b"));
  EXPECT_FALSE(accepts(alts, "c"));
  // The grammar prints back as GBNF that parses to the same language.
  const Grammar again = parse_gbnf(g.to_gbnf());
  EXPECT_TRUE(accepts(again, R"({"k": [true, "x"]})"));
  EXPECT_FALSE(accepts(again, "[1,]"));
  const Grammar groups =
      parse_gbnf(parse_gbnf(R"(root ::= ("a" | "b")+ "c"? [^x-z]{0,2})").to_gbnf());
  EXPECT_TRUE(accepts(groups, "abac"));
  EXPECT_TRUE(accepts(groups, "bcqq"));
  EXPECT_FALSE(accepts(groups, "abacx"));
}

TEST(Gbnf, ErrorsNameThePlaceAndTheProblem) {
  EXPECT_NE(error_of("root ::= item").find("'item' is used but never defined"), std::string::npos);
  EXPECT_NE(error_of("start ::= \"a\"").find("no rule named 'root'"), std::string::npos);
  EXPECT_NE(error_of("root ::= root \"a\" | \"a\"").find("left recursion"), std::string::npos);
  EXPECT_NE(error_of("root ::= x \"a\"\nx ::= \"\" | root").find("left recursion"),
            std::string::npos);
  EXPECT_NE(error_of("root ::= (\"a\"?)*").find("may be empty"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\"\nx ::= \"open").find("line 2, column 12"), std::string::npos);
  EXPECT_NE(error_of("root ::= [b-a]").find("ends below its start"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\"{5,2}").find("below the minimum"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"\\q\"").find("unknown escape"), std::string::npos);
  EXPECT_NE(error_of("root \"a\"").find("expected '::='"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\" )").find("unexpected ')'"), std::string::npos);
  EXPECT_NE(error_of("root ::= <think>").find("not supported"), std::string::npos);
}

TEST(Gbnf, HostileGrammarsHitLimitsNotMemory) {
  // Repetition counts multiply: each level is checked before it is built.
  EXPECT_NE(error_of("root ::= \"a\"{100000}").find("repetition count over"), std::string::npos);
  Limits small;
  small.max_symbols = 10000;
  EXPECT_NE(error_of("root ::= \"abcdefghij\"{5000}", small).find("symbols"), std::string::npos);
  std::string deep = "root ::= ";
  for (int i = 0; i < 1000; ++i) deep += "(";
  deep += "\"a\"";
  for (int i = 0; i < 1000; ++i) deep += ")";
  EXPECT_NE(error_of(deep).find("nest deeper"), std::string::npos);
  small.max_rules = 100;
  std::string many = "root ::= r0\n";
  for (int i = 0; i < 200; ++i) many += fmt::format("r{} ::= \"x\" r{}?\n", i, i + 1);
  many += "r200 ::= \"y\"\n";
  EXPECT_NE(error_of(many, small).find("rules"), std::string::npos);
}

}  // namespace
}  // namespace brisk::grammar
