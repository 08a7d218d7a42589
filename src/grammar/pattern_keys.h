// Object keys split by the patternProperties they match. JSON Schema gives a key beyond the
// declared properties the schemas of every pattern it matches (search semantics), and
// additionalProperties' schema when it matches none. The keys are determinized once (dfa.h), with
// a marker after each pattern's language, after the declared names and after any string; each
// set of patterns that some key matches exactly becomes a rule of those keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace brisk::grammar {

struct PatternKeys {
  std::vector<size_t> patterns;  // the patterns these keys match (indices, ascending); none: no
                                 // pattern matches them
  int32_t rule;                  // the keys' characters, unquoted, as code point classes
};

// The key classes over `patterns`, the declared `names` being no such keys, in the order of their
// pattern sets; keys outside `allowed` (propertyNames' language, from its root) are none either,
// when it is given. Fails, naming the limit, past dfa.h's limits, 61 patterns or 16,384 rules.
std::vector<PatternKeys> add_pattern_keys(Grammar& g, const std::vector<std::string>& patterns,
                                          const std::vector<std::string>& names,
                                          const Grammar* allowed = nullptr);

}  // namespace brisk::grammar
