#include "grammar/json.h"

#include <fmt/format.h>

#include "core/error.h"

namespace brisk::grammar {
namespace {

// RFC 8259's grammar in GBNF; the root and `ws` are filled in from the request and the style.
constexpr const char* kJson =
    R"(value   ::= object | array | string | number | "true" | "false" | "null"
object  ::= "{" ws ( member (ws "," ws member)* ws )? "}"
member  ::= string ws ":" ws value
array   ::= "[" ws ( value (ws "," ws value)* ws )? "]"
string  ::= "\"" char* "\""
char    ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )
)";

}  // namespace

namespace {
Grammar json_rules_grammar(const JsonStyle& style, bool object_only) {
  if (style.max_whitespace < 0 || style.max_whitespace > 1000)
    fail("JSON whitespace bound {} is not in 0..1000", style.max_whitespace);
  std::string text = object_only ? "root ::= ws object ws\n" : "root ::= ws value ws\n";
  text += kJson;
  text += fmt::format(
      "number  ::= \"-\"? ( \"0\" | [1-9] [0-9]{{0,{}}} ) ( \".\" [0-9]{{1,{}}} )? ( [eE] [-+]? "
      "[0-9]{{1,{}}} )?\n",
      kMaxIntegerDigits - 1, kMaxFractionDigits, kMaxExponentDigits);
  text += style.compact || style.max_whitespace == 0
              ? "ws ::= \"\"\n"
              : fmt::format("ws ::= [ \\t\\n\\r]{{0,{}}}\n", style.max_whitespace);
  return parse_gbnf(text);
}
}  // namespace

int32_t add_json(Grammar& g, const JsonStyle& style, bool object_only) {
  return g.add_grammar(json_rules_grammar(style, object_only));
}

JsonRules add_json_rules(Grammar& g, const JsonStyle& style) {
  const Grammar j = json_rules_grammar(style, false);
  const int32_t offset = static_cast<int32_t>(g.rules().size());
  g.add_grammar(j);
  return {offset + j.find("value"), offset + j.find("object"), offset + j.find("string"),
          offset + j.find("number"), offset + j.find("ws")};
}

Grammar json_grammar(const JsonStyle& style, bool object_only) {
  Grammar g;
  g.set_root(add_json(g, style, object_only));
  g.check();
  return g;
}

}  // namespace brisk::grammar
