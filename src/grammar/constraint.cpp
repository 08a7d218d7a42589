#include "grammar/constraint.h"

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "grammar/json_schema.h"
#include "tokenizer/unicode.h"

namespace brisk::grammar {

const char* kind_name(Constraint::Kind k) {
  switch (k) {
    case Constraint::Kind::Json:
      return "json";
    case Constraint::Kind::JsonObject:
      return "json_object";
    case Constraint::Kind::JsonSchema:
      return "json_schema";
    case Constraint::Kind::Regex:
      return "regex";
    case Constraint::Kind::Gbnf:
      return "grammar";
    case Constraint::Kind::Choice:
      return "choice";
    case Constraint::Kind::Built:
      return "built";
  }
  return "?";
}

Grammar constraint_grammar(const Constraint& c) {
  switch (c.kind) {
    case Constraint::Kind::Json:
      return json_grammar(c.style);
    case Constraint::Kind::JsonObject:
      return json_grammar(c.style, true);
    case Constraint::Kind::JsonSchema: {
      nlohmann::ordered_json schema;
      try {
        schema = nlohmann::ordered_json::parse(c.text);
      } catch (const nlohmann::json::exception& e) {
        fail("json_schema: not valid JSON: {}", e.what());
      }
      SchemaOptions o;
      o.style = c.style;
      o.oneof_as_anyof = c.oneof_as_anyof;
      return json_schema_grammar(schema, o);
    }
    case Constraint::Kind::Regex:
      return parse_regex(c.text);
    case Constraint::Kind::Gbnf:
      return parse_gbnf(c.text);
    case Constraint::Kind::Built: {
      if (!c.builder) fail("grammar: no grammar builder was given");
      Grammar g = c.builder();
      g.check();
      return g;
    }
    case Constraint::Kind::Choice: {
      if (c.choices.empty()) fail("choice: no strings to choose from");
      Grammar g;
      const int32_t r = g.add_rule("choice");
      for (const std::string& s : c.choices) {
        Sequence seq;
        for (uint32_t cp : utf8_to_cpts(s)) seq.push_back(Symbol::one(cp));
        g.add_alt(r, std::move(seq));
      }
      g.set_root(r);
      g.check();
      return g;
    }
  }
  fail("unknown constraint");
}

}  // namespace brisk::grammar
