// A regular grammar (a pattern, a format, a set of names) as a deterministic automaton over
// characters. The characters are split into atoms, sets of code points that every class of the
// grammar holds whole or not at all, so a state has one move per atom; the states are the
// matcher's sets of stacks (stacks.h) reached from the start. A grammar may tag where its
// alternatives end with markers, code points past Unicode (Dfa::kMarker + i), which are no
// characters: a state's markers are those after which it would accept.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace brisk::grammar {

struct Dfa {
  static constexpr uint32_t kMarker = 0x110000;
  std::vector<bool> accept;       // per state; state 0 is the start
  std::vector<uint64_t> markers;  // per state: bit i when marker i leads to acceptance
  // Per state: its moves grouped by target, each with the characters that lead there.
  std::vector<std::vector<std::pair<int32_t, std::vector<CharRange>>>> moves;
};

// Fails, naming the limit, past 127 atoms and markers together, 64 markers or 4096 states (a
// grammar that is not regular reaches the last).
Dfa determinize(const Grammar& regular, size_t n_markers = 0);

// Which states can reach one that `goal` marks, following `edges` (per state, the states it
// moves to; -1 for none): found backwards from the goals.
std::vector<bool> reaching(const std::vector<std::vector<int32_t>>& edges,
                           const std::vector<bool>& goal);
// Per state, the states its moves lead to.
std::vector<std::vector<int32_t>> targets(const Dfa& d);

// A rule, added to g, of the strings both regular grammars match (from their roots): their union
// determinized with a marker after each, cut to the states where both accept; -1 when none.
int32_t add_intersection(Grammar& g, const Grammar& a, const Grammar& b);

}  // namespace brisk::grammar
