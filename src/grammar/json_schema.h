// JSON Schema as a grammar: the texts of exactly the JSON values a schema accepts, or an error that
// names the keyword (and where it is) when the schema asks for something a grammar cannot enforce.
// Drafts 4 to 2020-12: type, enum, const, properties (generated in the schema's order), required,
// additionalProperties, patternProperties, items / prefixItems / additionalItems, minItems,
// maxItems, minLength, maxLength, pattern, format, minimum / maximum and their exclusive forms,
// allOf (merged), anyOf, oneOf (when its branches cannot overlap), $ref / $defs / definitions
// (recursive ones too). Annotations (title, description, default, ...) are ignored.
#pragma once

#include <nlohmann/json.hpp>

#include "grammar/grammar.h"
#include "grammar/json.h"

namespace brisk::grammar {

struct SchemaOptions {
  JsonStyle style;
  // 4, 6, 7, 2019 or 2020 (the draft's rules for $ref's siblings and exclusive bounds); 0: the
  // draft $schema names, else 2020-12.
  int draft = 0;
  double max_seconds = 2.0;  // compiling longer than this is refused
  int max_depth = 64;        // nesting of schemas
  // oneOf whose branches may overlap is enforced as anyOf instead of refused (Constraint's).
  bool oneof_as_anyof = false;
};

// A rule of g matching the values `schema` accepts, whitespace around them included.
int32_t add_json_schema(Grammar& g, const nlohmann::ordered_json& schema, const SchemaOptions& o);
// The same as a grammar of its own, checked.
Grammar json_schema_grammar(const nlohmann::ordered_json& schema, const SchemaOptions& o = {});

}  // namespace brisk::grammar
