// A GBNF grammar from anywhere, parsed under the default limits: every failure must be a
// brisk::Error, within bounded time and memory; a grammar that parses prints back as GBNF that
// parses again to as many rules, and is matched token by token (grammar_walk.h). Mutations are
// syntax-aware (text_mutator.h): rules, references, repetitions and recursion.
#include <cstdlib>
#include <optional>
#include <string_view>

#include "core/error.h"
#include "fuzz_util.h"
#include "grammar/grammar.h"
#include "grammar_walk.h"
#include "text_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<grammar::Grammar> g;
  try {
    g = grammar::parse_gbnf(text);
  } catch (const Error&) {
    return 0;
  }
  // What parsed prints as GBNF that parses again, to as many rules.
  try {
    if (grammar::parse_gbnf(g->to_gbnf()).rules().size() != g->rules().size()) std::abort();
  } catch (const Error&) {
    std::abort();
  }
  try {
    fuzz::walk_grammar(*g, static_cast<uint32_t>(size));
  } catch (const Error&) {
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return brisk::fuzz::mutate_text(data, size, max_size, seed, [](std::string& t, unsigned int s) {
    brisk::fuzz::TextMutator(s).mutate_gbnf(t);
  });
}
