// A JSON Schema from anywhere (as a request's response_format carries it), compiled under a short
// time budget: every failure must be a brisk::Error (a keyword refused, a limit reached), within
// bounded time and memory; a schema that compiles is matched token by token (grammar_walk.h).
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "grammar/json_schema.h"
#include "grammar_walk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The server refuses bodies nested deeper than 64 levels before parsing; so does this.
  int depth = 0;
  for (char c : text)
    if ((c == '[' || c == '{') && ++depth > 64) return 0;
  const auto schema = nlohmann::ordered_json::parse(text, nullptr, false);
  if (schema.is_discarded()) return 0;
  grammar::SchemaOptions o;
  o.max_seconds = 0.5;
  o.style.max_whitespace = size % 3;
  std::optional<grammar::Grammar> g;
  try {
    g = grammar::json_schema_grammar(schema, o);
  } catch (const Error&) {
    return 0;
  }
  try {
    fuzz::walk_grammar(*g, static_cast<uint32_t>(size));
  } catch (const Error&) {
  }
  return 0;
}
