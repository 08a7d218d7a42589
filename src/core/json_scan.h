// Where a JSON value's text ends, read from its structure alone (brackets, strings, scalars)
// without parsing it: for a model's reply that may still be arriving, and for a request body
// checked before a recursive parser sees it (a body nested a million deep would exhaust its
// stack).
#pragma once

#include <cstddef>
#include <string>
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

// Where a scan of a string, object or array ran out of text. A text that only grows (a reply
// being streamed) is scanned on from there, so that a value written over many pieces is read
// about once rather than from its start on every piece.
struct JsonScanState {
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t start = kNone;  // the value's position; kNone: nothing kept
  size_t at = 0;         // scanned up to here
  std::string closers;   // the brackets open at `at`, innermost last
  bool in_string = false, escaped = false;
};
// As json_value_end, going on from `state` when it holds a scan of the value at pos over the same
// text (then at most `state.at` bytes shorter), and keeping the scan there when the text runs out.
JsonEnd json_value_end(std::string_view s, size_t pos, size_t max_nesting, JsonScanState& state);

}  // namespace brisk
