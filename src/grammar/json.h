// JSON as a grammar: any JSON value, or any JSON object (OpenAI's response_format json_object),
// with the whitespace between tokens bounded so that a model cannot pad forever, or none at all in
// the compact style.
#pragma once

#include "grammar/grammar.h"

namespace brisk::grammar {

struct JsonStyle {
  // Whitespace characters allowed between two tokens (and around the value): 20 holds a newline and
  // the indentation of pretty-printed JSON nine levels deep at two spaces a level.
  int max_whitespace = 20;
  bool compact = false;  // no whitespace at all
};

// The digits a number may have, so that a model cannot pad one forever (a run of zeros is a
// likely loop for a small model); enough for every 64-bit integer and every double's digits.
constexpr int kMaxIntegerDigits = 20, kMaxFractionDigits = 20, kMaxExponentDigits = 4;

// The rules of JSON added to a grammar: a value, an object, a string, a number, and the bounded
// whitespace that may stand between tokens.
struct JsonRules {
  int32_t value, object, string, number, ws;
};
JsonRules add_json_rules(Grammar& g, const JsonStyle& style);

// Adds the rules of JSON to g and returns the rule of one JSON value (object_only: of one object),
// whitespace around it included.
int32_t add_json(Grammar& g, const JsonStyle& style, bool object_only = false);
// The same as a grammar of its own, checked.
Grammar json_grammar(const JsonStyle& style = {}, bool object_only = false);

}  // namespace brisk::grammar
