// A regular expression from anywhere (a request's guided_regex, a schema's pattern), compiled both
// ways brisk uses it, as the whole output and as a pattern found anywhere in a string: every
// failure must be a brisk::Error, within bounded time and memory; what compiles is matched token by
// token (grammar_walk.h). Mutations are syntax-aware (text_mutator.h).
#include <optional>
#include <string_view>

#include "core/error.h"
#include "grammar/grammar.h"
#include "grammar_walk.h"
#include "text_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace brisk;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool search : {false, true}) {
    std::optional<grammar::Grammar> g;
    try {
      if (search) {
        g.emplace();
        g->set_root(grammar::add_regex_search(*g, text, "pattern"));
        g->check();
      } else {
        g = grammar::parse_regex(text);
      }
    } catch (const Error&) {
      continue;
    }
    try {
      fuzz::walk_grammar(*g, static_cast<uint32_t>(size) + search);
    } catch (const Error&) {
    }
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return brisk::fuzz::mutate_text(data, size, max_size, seed, [](std::string& t, unsigned int s) {
    brisk::fuzz::TextMutator(s).mutate_regex(t);
  });
}
