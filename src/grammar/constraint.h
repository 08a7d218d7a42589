// What a request or a command line can constrain its output to, in one place: any JSON, a JSON
// object, a JSON Schema, a regular expression, a GBNF grammar or a choice among strings; and the
// grammar each one compiles to.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/json.h"

namespace brisk::grammar {

struct Constraint {
  // Built: a grammar the caller's builder makes when the constraint is compiled (off the
  // server's I/O thread: tool calls in a model family's syntax), `text` a key that identifies it.
  enum class Kind { Json, JsonObject, JsonSchema, Regex, Gbnf, Choice, Built };
  Kind kind = Kind::Json;
  std::string text;                  // the schema (JSON text), the pattern or the GBNF
  std::vector<std::string> choices;  // Choice: the whole output is one of these
  JsonStyle style;                   // whitespace inside JSON
  // JSON Schema: oneOf enforced as anyOf where its branches may overlap (the caller opted in, as
  // other engines take oneOf; a value matching two branches is then possible).
  bool oneof_as_anyof = false;
  std::function<Grammar()> builder;
  // The grammar's text may be spelled by special tokens whose text it is (a tool call's markers
  // are such tokens in some vocabularies); otherwise special tokens are never allowed.
  bool special_text = false;
};

const char* kind_name(Constraint::Kind k);  // "json_schema", "regex", ...
// The grammar of the texts the constraint allows, checked; an error names what is wrong.
Grammar constraint_grammar(const Constraint& c);

}  // namespace brisk::grammar
