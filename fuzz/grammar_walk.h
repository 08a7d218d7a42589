// Shared by the grammar fuzz targets: a grammar that compiled is matched token by token over a
// small made-up vocabulary (every single byte and some longer pieces), the full mask computed
// before each step, so that lowering, stack sets, masks and forced bytes all run on it.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "grammar/matcher.h"

namespace brisk::fuzz {

inline void walk_grammar(const grammar::Grammar& g, uint32_t seed) {
  static const auto trie = [] {
    std::vector<std::string> bytes = {""};  // token 0 ends generation
    for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
    for (const char* s : {"{\"", "\":", "\",\"", "true", "null", "  ", "ab", "\\u00", "12", "]}"})
      bytes.emplace_back(s);
    return std::make_shared<grammar::TokenTrie>(std::move(bytes), std::vector<int32_t>{0});
  }();
  auto cg = std::make_shared<grammar::CompiledGrammar>(g, trie);
  grammar::Matcher m(cg);
  std::vector<uint64_t> mask(trie->n_words());
  for (int step = 0; step < 48 && !m.done(); ++step) {
    (void)m.forced_bytes(16);
    m.fill_mask(mask.data());
    // The allowed tokens, one picked by the seed; each must also be allowed one by one.
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < trie->n_vocab(); ++t)
      if ((mask[size_t(t) >> 6] >> (t & 63)) & 1) allowed.push_back(t);
    if (allowed.empty()) break;
    seed = seed * 1664525u + 1013904223u;
    const int32_t t = allowed[(seed >> 8) % allowed.size()];
    if (!m.allows(t) || !m.accept(t)) std::abort();  // the mask and the matcher disagree
    if (step % 7 == 6) m.rollback(1);
  }
}

}  // namespace brisk::fuzz
