// A JSON Schema from anywhere (as a request's response_format carries it), compiled under a short
// time budget: every failure must be a brisk::Error (a keyword refused, a limit reached), within
// bounded time and memory; a schema that compiles is matched token by token (grammar_walk.h).
// An input that is a JSON-Schema-Test-Suite file (a list of {"schema", "tests"}) compiles each of
// its schemas, so the suite's files seed the corpus as they are. Mutations are structure-aware
// (json_mutator.h): they edit the parsed schema, which random bytes rarely keep valid.
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "grammar/json_schema.h"
#include "grammar_walk.h"
#include "json_mutator.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using brisk::fuzz::ojson;

void compile(const ojson& schema, size_t size) {
  using namespace brisk;
  grammar::SchemaOptions o;
  o.max_seconds = 0.5;
  o.style.max_whitespace = size % 3;
  std::optional<grammar::Grammar> g;
  try {
    g = grammar::json_schema_grammar(schema, o);
  } catch (const Error&) {
    return;
  }
  try {
    fuzz::walk_grammar(*g, static_cast<uint32_t>(size));
  } catch (const Error&) {
  }
}

bool too_deep(std::string_view text) {
  // The server refuses bodies nested deeper than 64 levels before parsing; so does this.
  int depth = 0;
  for (char c : text)
    if ((c == '[' || c == '{') && ++depth > 64) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (too_deep(text)) return 0;
  const auto schema = ojson::parse(text, nullptr, false);
  if (schema.is_discarded()) return 0;
  if (schema.is_array() && !schema.empty() && schema[0].is_object() &&
      schema[0].contains("schema")) {
    for (const ojson& group : schema)
      if (group.is_object() && group.contains("schema")) compile(group["schema"], size);
    return 0;
  }
  compile(schema, size);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  ojson doc =
      ojson::parse(std::string_view(reinterpret_cast<const char*>(data), size), nullptr, false);
  if (doc.is_discarded() || seed % 8 == 0) return LLVMFuzzerMutate(data, size, max_size);
  // A suite file: mutate one of its schemas.
  ojson* target = &doc;
  if (doc.is_array() && !doc.empty() && doc[seed % doc.size()].is_object() &&
      doc[seed % doc.size()].contains("schema"))
    target = &doc[seed % doc.size()]["schema"];
  brisk::fuzz::JsonMutator(seed).mutate(*target, nullptr);
  const std::string out = doc.dump(-1, ' ', false, ojson::error_handler_t::replace);
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
