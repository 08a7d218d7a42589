// A regular language (a string's pattern or format) cut to the strings of min..max characters:
// JSON Schema's minLength and maxLength beside pattern or format. The language is determinized
// over its characters (each character class split into disjoint atoms, every atom one character),
// and its product with a count of characters becomes rules R(state, count). Pairs from which no
// string within the bounds can be finished are left out, so generation never enters a dead end.
#pragma once

#include <cstdint>
#include <optional>

#include "grammar/grammar.h"

namespace brisk::grammar {

// A rule, added to g, of the strings `language` (from its root) matches that have min to max
// code points (any number from min on when max is absent); -1 when there are none. Fails, naming
// the limit, when the language has too many character classes or states, or the product too many
// rules.
int32_t add_length_bounded(Grammar& g, const Grammar& language, uint32_t min,
                           std::optional<uint32_t> max);

}  // namespace brisk::grammar
