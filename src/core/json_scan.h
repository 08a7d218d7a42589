// Where a JSON value's text ends, read from its structure alone (brackets, strings, scalars)
// without parsing it: for a model's reply that may still be arriving, and for a request body
// checked before a recursive parser sees it (a body nested a million deep would exhaust its
// stack).
#pragma once

#include <cstddef>
#include <string_view>

namespace brisk {

enum class JsonSpan { Complete, Incomplete, Invalid };
struct JsonEnd {
  JsonSpan state;
  size_t end;             // past the value; where the text ran out or broke otherwise
  bool too_deep = false;  // Invalid because objects and arrays nest deeper than allowed
};

// The value at pos. A closing bracket that does not match, a control character in a string or
// nesting past max_nesting is Invalid; text that runs out first is Incomplete.
JsonEnd json_value_end(std::string_view s, size_t pos, size_t max_nesting);

}  // namespace brisk
