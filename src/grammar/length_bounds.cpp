#include "grammar/length_bounds.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "grammar/byte_grammar.h"
#include "grammar/stacks.h"

namespace brisk::grammar {
namespace {

// Atoms are coded as the code points 0..126 while determinizing, one byte each once lowered.
constexpr size_t kMaxAtoms = 127;
constexpr size_t kMaxStates = 4096;  // of the determinized language
constexpr size_t kMaxPairs = 16384;  // (state, count) pairs, each a rule
constexpr uint32_t kSurrogates = 0xD800, kPastSurrogates = 0xE000, kPastLast = 0x110000;

using Key = std::vector<std::pair<uint32_t, uint32_t>>;
Key key_of(const std::vector<CharRange>& ranges) {
  Key k;
  for (const CharRange& r : ranges) k.push_back({r.lo, r.hi});
  return k;
}

// The language's character classes split into atoms: disjoint sets of code points that every
// class holds whole or not at all.
struct Atoms {
  std::vector<std::vector<CharRange>> chars;       // per atom: its code points
  std::map<Key, std::vector<CharRange>> of_class;  // per class: its atoms, coded 0..n-1
};

Atoms split_atoms(const Grammar& lang) {
  std::vector<std::vector<CharRange>> classes;
  std::map<Key, size_t> seen;
  for (const Rule& r : lang.rules())
    for (const Sequence& alt : r.alts)
      for (const Symbol& s : alt)
        if (s.kind == Symbol::Kind::Chars &&
            seen.try_emplace(key_of(s.ranges), classes.size()).second)
          classes.push_back(s.ranges);
  std::vector<uint32_t> cuts = {0, kSurrogates, kPastSurrogates, kPastLast};
  for (const auto& c : classes)
    for (const CharRange& r : c) cuts.insert(cuts.end(), {r.lo, r.hi + 1});
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  cuts.erase(std::upper_bound(cuts.begin(), cuts.end(), kPastLast), cuts.end());
  // Which classes hold each interval between two cuts, then an atom per distinct answer.
  const size_t n = cuts.size() - 1, words = (classes.size() + 63) / 64;
  std::vector<std::vector<uint64_t>> member(n, std::vector<uint64_t>(words, 0));
  auto each_interval = [&](const CharRange& r, auto&& f) {
    for (size_t i =
             static_cast<size_t>(std::lower_bound(cuts.begin(), cuts.end(), r.lo) - cuts.begin());
         i < n && cuts[i] <= r.hi; ++i)
      f(i);
  };
  for (size_t c = 0; c < classes.size(); ++c)
    for (const CharRange& r : classes[c])
      each_interval(r, [&](size_t i) { member[i][c / 64] |= uint64_t{1} << (c % 64); });
  Atoms out;
  std::map<std::vector<uint64_t>, int32_t> atom_of;
  std::vector<int32_t> atom(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const bool surrogate = cuts[i] >= kSurrogates && cuts[i] < kPastSurrogates;
    if (surrogate || std::all_of(member[i].begin(), member[i].end(), [](uint64_t w) { return !w; }))
      continue;
    auto [it, fresh] = atom_of.try_emplace(member[i], static_cast<int32_t>(out.chars.size()));
    if (fresh) out.chars.emplace_back();
    atom[i] = it->second;
    out.chars[static_cast<size_t>(it->second)].push_back({cuts[i], cuts[i + 1] - 1});
  }
  if (out.chars.size() > kMaxAtoms)
    fail("the pattern tells apart more than {} sets of characters (the limit with a length)",
         kMaxAtoms);
  for (const auto& c : classes) {
    std::vector<CharRange> coded;
    for (const CharRange& r : c)
      each_interval(r, [&](size_t i) {
        if (atom[i] >= 0) coded.push_back({uint32_t(atom[i]), uint32_t(atom[i])});
      });
    if (coded.empty()) fail("a character class holds only surrogates, which UTF-8 cannot");
    out.of_class[key_of(c)] = Symbol::chars(std::move(coded)).ranges;
  }
  return out;
}

// The language as a deterministic automaton over atoms: per state whether it may end there, and
// its moves grouped by target, each with the characters that lead there.
struct Dfa {
  std::vector<bool> accept;
  std::vector<std::vector<std::pair<int32_t, std::vector<CharRange>>>> moves;
};

Dfa determinize(const Grammar& lang, const Atoms& atoms) {
  Grammar coded = lang;
  coded.map_chars(0, [&](const std::vector<CharRange>& r) {
    return Symbol::chars(atoms.of_class.at(key_of(r)));
  });
  const ByteGrammar bg = lower_to_bytes(coded);
  StackSets st(bg);
  std::unordered_map<int32_t, int32_t> id;
  std::vector<int32_t> sets;
  auto state = [&](int32_t set) {
    auto [it, fresh] = id.try_emplace(set, static_cast<int32_t>(sets.size()));
    if (fresh) {
      if (sets.size() >= kMaxStates)
        fail("the pattern has more than {} states (the limit with a length)", kMaxStates);
      sets.push_back(set);
    }
    return it->second;
  };
  state(st.start());  // state 0
  Dfa d;
  for (size_t i = 0; i < sets.size(); ++i) {
    const int32_t set = sets[i];
    std::map<int32_t, std::vector<CharRange>> by_target;
    for (size_t a = 0; a < atoms.chars.size(); ++a) {
      const int32_t t = st.step(set, static_cast<uint8_t>(a));
      if (t == StackSets::kDead) continue;
      auto& r = by_target[state(t)];
      r.insert(r.end(), atoms.chars[a].begin(), atoms.chars[a].end());
    }
    d.accept.push_back((st.flags(set) & StackSets::kAccept) != 0);
    d.moves.emplace_back(by_target.begin(), by_target.end());
  }
  return d;
}

}  // namespace

int32_t add_length_bounded(Grammar& g, const Grammar& language, uint32_t min,
                           std::optional<uint32_t> max) {
  if (max && *max < min) return -1;
  const Dfa d = determinize(language, split_atoms(language));
  // Pairs (state, characters so far) reachable from the start; without a maximum, counts past
  // the minimum are all one.
  std::unordered_map<uint64_t, int32_t> id;
  std::vector<std::pair<int32_t, uint32_t>> pairs;
  auto pair = [&](int32_t s, uint32_t c) {
    auto [it, fresh] = id.try_emplace((uint64_t(uint32_t(s)) << 32) | c, int32_t(pairs.size()));
    if (fresh) {
      if (pairs.size() >= kMaxPairs)
        fail("the pattern with these lengths needs more than {} rules (the limit)", kMaxPairs);
      pairs.push_back({s, c});
    }
    return it->second;
  };
  pair(0, 0);
  std::vector<std::vector<int32_t>> edges;  // per pair, per move of its state: the pair it reaches
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [s, c] = pairs[i];
    std::vector<int32_t> e;
    for (const auto& move : d.moves[size_t(s)])
      e.push_back(max ? (c < *max ? pair(move.first, c + 1) : -1)
                      : pair(move.first, std::min(c + 1, min)));
    edges.push_back(std::move(e));
  }
  // Pairs from which an accepted string can be finished, found backwards from the accepting ones.
  auto accepting = [&](size_t i) {
    return d.accept[size_t(pairs[i].first)] && pairs[i].second >= min;
  };
  std::vector<std::vector<int32_t>> preds(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i)
    for (int32_t e : edges[i])
      if (e >= 0) preds[size_t(e)].push_back(int32_t(i));
  std::vector<bool> alive(pairs.size(), false);
  std::vector<int32_t> work;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (accepting(i)) alive[i] = true, work.push_back(int32_t(i));
  while (!work.empty()) {
    const int32_t i = work.back();
    work.pop_back();
    for (int32_t p : preds[size_t(i)])
      if (!alive[size_t(p)]) alive[size_t(p)] = true, work.push_back(p);
  }
  if (!alive[0]) return -1;
  std::vector<int32_t> rule(pairs.size(), -1);
  for (size_t i = 0; i < pairs.size(); ++i)
    if (alive[i]) rule[i] = g.add_rule("length");
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!alive[i]) continue;
    const auto& moves = d.moves[size_t(pairs[i].first)];
    for (size_t k = 0; k < moves.size(); ++k)
      if (const int32_t e = edges[i][k]; e >= 0 && alive[size_t(e)])
        g.add_alt(rule[i], {Symbol::chars(moves[k].second), Symbol::ref(rule[size_t(e)])});
    if (accepting(i)) g.add_alt(rule[i], {});
  }
  return rule[0];
}

}  // namespace brisk::grammar
