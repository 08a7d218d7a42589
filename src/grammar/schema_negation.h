// `not` and `if` / `then` / `else` as schemas a grammar can enforce. A schema's complement is a
// schema again for the keywords real schemas negate: types, enum and const (as "none of these
// values"), required and properties (an object lacking a name, or holding one that fails its
// schema), bounds and lengths (the other side of the bound, on the type the keyword judges), and
// anyOf / allOf by De Morgan. A keyword judges only its own type, so its complement holds only
// values of that type: `not {"minimum": 3}` is a number below 3, never a string. Then
// `{if: C, then: T, else: E}` is anyOf [C and T, not-C and E], overlapping branches being what
// anyOf allows. Anything else under `not` or `if` is refused, naming the keyword.
#pragma once

#include <optional>
#include <string>

#include "grammar/schema_merge.h"

namespace brisk::grammar {

// The internal keyword "the value is none of these" (a negated enum or const). Its name cannot
// collide with a JSON Schema keyword; a client that sends it only narrows what it gets.
inline constexpr const char* kNotEnum = "\x01not-enum";

// {"not": s} as a schema, or nullopt where its complement is not one brisk can enforce.
std::optional<json> negate_schema(const json& s, SchemaMerger& m, const std::string& path,
                                  int depth = 0);

// s with its dependencies (draft 4-7's, and 2019-09's dependentRequired and dependentSchemas)
// as conditions: each "if NAME is present, then ..." is anyOf [NAME absent, NAME present and ...].
json without_dependencies(const json& s, const std::string& path);

// s with its `not` and `if` / `then` / `else` rewritten: merged into s, or as anyOf branches.
// Throws an Error naming the keyword where the complement cannot be enforced. depth: how many
// negations enclose this one (a $ref back into a `not` would otherwise recurse without end).
json without_negations(const json& s, SchemaMerger& m, const std::string& path, int depth = 0);

}  // namespace brisk::grammar
