// Pieces of JSON text as grammar rules, for the schema compiler: integers and numbers between
// bounds, strings by length, pattern or format, a string that is none of some names, and one
// literal value. Each matches the text of exactly the values it describes (in the forms a JSON
// writer produces: a string's characters raw, with the escapes JSON requires).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace brisk::grammar {

struct Bound {
  int64_t value;
  bool exclusive = false;
};
// Bounds are held to this magnitude: past it a bound is refused rather than approximated.
constexpr int64_t kMaxBound = 1'000'000'000'000'000'000;

struct NumberBound {
  double value;  // as a validator parses the schema's number
  bool exclusive = false;
};

// Integers between the bounds (an integer's text may end in ".0", as 1.0 is an integer to JSON
// Schema). Numbers between bounds, fractional bounds included, are written without an exponent
// and accepted only where the double a validator parses is within them; without bounds, any
// JSON number. -1 where no value fits.
int32_t add_integer(Grammar& g, std::optional<Bound> lo, std::optional<Bound> hi);
int32_t add_number(Grammar& g, std::optional<NumberBound> lo, std::optional<NumberBound> hi);

struct StringSpec {
  uint32_t min_length = 0;
  std::optional<uint32_t> max_length;
  std::string pattern;  // an ECMAScript pattern the value must contain a match of
  std::string format;   // a format (string_formats.h) the value must have
};
// Rules that strings of one grammar may share: the chains of their maxLength bounds, by bound
// (the body of at most n characters is the tail of the body of at most n + 1, so a schema with a
// dozen different bounds builds one chain), and the blocks that long bounds count in.
struct StringBodies {
  std::map<uint32_t, int32_t> up_to;
  std::map<uint32_t, int32_t> exactly;  // exactly n characters, the blocks of long bounds
};
// A quoted JSON string (code points counted as JSON Schema counts length).
int32_t add_string(Grammar& g, const StringSpec& s, StringBodies* shared = nullptr);
// Replaces the character classes of the rules from `first` on by their forms in a JSON string
// (raw, or escaped where JSON requires it).
void to_json_chars(Grammar& g, int32_t first);
// The escape sequences that the keys of one grammar's "none of these names" strings leave open,
// one rule per set of escaped characters: nearly every trie node leaves the same set, and each
// node calls its rule from its own alternative anyway (so sharing costs no precision, stacks.h),
// where a copy per node would be some 34 alternatives.
struct NameEscapes {
  std::map<std::vector<uint32_t>, int32_t> by_set;
};
// A quoted string whose value is none of `names`.
int32_t add_string_except(Grammar& g, const std::vector<std::string>& names,
                          NameEscapes* escapes = nullptr);
// Exactly this value (objects' members in its order); ws: the rule between tokens.
int32_t add_literal(Grammar& g, const nlohmann::ordered_json& v, int32_t ws);

}  // namespace brisk::grammar
