#include "grammar/dfa.h"

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

// Atoms and markers are coded as the code points 0..126 while determinizing, one byte each once
// lowered.
constexpr size_t kMaxCodes = 127;
constexpr size_t kMaxStates = 4096;
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
        if (s.kind == Symbol::Kind::Chars && s.ranges[0].lo < Dfa::kMarker &&
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
  if (out.chars.size() > kMaxCodes)
    fail("the pattern tells apart more than {} sets of characters (the limit)", kMaxCodes);
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

}  // namespace

Dfa determinize(const Grammar& regular, size_t n_markers) {
  const Atoms atoms = split_atoms(regular);
  const size_t n_atoms = atoms.chars.size();
  if (n_markers > 64 || n_atoms + n_markers > kMaxCodes)
    fail("the pattern tells apart more than {} sets of characters (the limit)", kMaxCodes);
  Grammar coded = regular;
  coded.map_chars(0, [&](const std::vector<CharRange>& r) {
    if (r[0].lo >= Dfa::kMarker) {
      const uint32_t code = uint32_t(n_atoms) + (r[0].lo - Dfa::kMarker);
      return Symbol::one(code);
    }
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
        fail("the pattern has more than {} states (the limit)", kMaxStates);
      sets.push_back(set);
    }
    return it->second;
  };
  state(st.start());  // state 0
  Dfa d;
  for (size_t i = 0; i < sets.size(); ++i) {
    const int32_t set = sets[i];
    std::map<int32_t, std::vector<CharRange>> by_target;
    for (size_t a = 0; a < n_atoms; ++a) {
      const int32_t t = st.step(set, static_cast<uint8_t>(a));
      if (t == StackSets::kDead) continue;
      auto& r = by_target[state(t)];
      r.insert(r.end(), atoms.chars[a].begin(), atoms.chars[a].end());
    }
    uint64_t marks = 0;
    for (size_t m = 0; m < n_markers; ++m)
      if (st.flags(st.step(set, static_cast<uint8_t>(n_atoms + m))) & StackSets::kAccept)
        marks |= uint64_t{1} << m;
    d.accept.push_back((st.flags(set) & StackSets::kAccept) != 0);
    d.markers.push_back(marks);
    d.moves.emplace_back(by_target.begin(), by_target.end());
  }
  return d;
}

std::vector<bool> reaching(const std::vector<std::vector<int32_t>>& edges,
                           const std::vector<bool>& goal) {
  std::vector<std::vector<int32_t>> preds(edges.size());
  for (size_t s = 0; s < edges.size(); ++s)
    for (int32_t t : edges[s])
      if (t >= 0) preds[size_t(t)].push_back(int32_t(s));
  std::vector<bool> alive = goal;
  std::vector<int32_t> work;
  for (size_t s = 0; s < goal.size(); ++s)
    if (goal[s]) work.push_back(int32_t(s));
  while (!work.empty()) {
    const int32_t s = work.back();
    work.pop_back();
    for (int32_t p : preds[size_t(s)])
      if (!alive[size_t(p)]) alive[size_t(p)] = true, work.push_back(p);
  }
  return alive;
}

std::vector<std::vector<int32_t>> targets(const Dfa& d) {
  std::vector<std::vector<int32_t>> out(d.moves.size());
  for (size_t s = 0; s < d.moves.size(); ++s)
    for (const auto& move : d.moves[s]) out[s].push_back(move.first);
  return out;
}

int32_t add_intersection(Grammar& g, const Grammar& a, const Grammar& b) {
  Grammar both;
  const int32_t root = both.add_rule("both");
  both.add_alt(root, {Symbol::ref(both.add_grammar(a)), Symbol::one(Dfa::kMarker)});
  both.add_alt(root, {Symbol::ref(both.add_grammar(b)), Symbol::one(Dfa::kMarker + 1)});
  both.set_root(root);
  const Dfa d = determinize(both, 2);
  const size_t n = d.moves.size();
  auto accepting = [&](size_t s) { return d.markers[s] == 3; };
  std::vector<bool> goal(n);
  for (size_t s = 0; s < n; ++s) goal[s] = accepting(s);
  const std::vector<bool> alive = reaching(targets(d), goal);
  if (!alive[0]) return -1;
  std::vector<int32_t> rule(n, -1);
  for (size_t s = 0; s < n; ++s)
    if (alive[s]) rule[s] = g.add_rule("both");
  for (size_t s = 0; s < n; ++s) {
    if (!alive[s]) continue;
    for (const auto& [t, chars] : d.moves[s])
      if (alive[size_t(t)])
        g.add_alt(rule[s], {Symbol::chars(chars), Symbol::ref(rule[size_t(t)])});
    if (accepting(s)) g.add_alt(rule[s], {});
  }
  return rule[0];
}

}  // namespace brisk::grammar
