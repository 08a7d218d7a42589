#include "grammar/length_bounds.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"
#include "grammar/dfa.h"

namespace brisk::grammar {
namespace {
constexpr size_t kMaxPairs = 16384;  // (state, count) pairs, each a rule
}  // namespace

int32_t add_length_bounded(Grammar& g, const Grammar& language, uint32_t min,
                           std::optional<uint32_t> max) {
  if (max && *max < min) return -1;
  const Dfa d = determinize(language);
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
  std::vector<bool> goal(pairs.size());
  for (size_t i = 0; i < pairs.size(); ++i) goal[i] = accepting(i);
  const std::vector<bool> alive = reaching(edges, goal);
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
