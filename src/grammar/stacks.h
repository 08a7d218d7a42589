// A parser's state as a set of stacks, each stack the positions still to match (its top a byte
// class) and the places to return to, shared as a tree of interned nodes. Stepping a set by a byte
// is memoized per (set, byte class), so walking a vocabulary or re-walking a loop costs a table
// lookup per byte: a lazily built automaton over the grammar's reachable stack sets.
//
// A stack may bottom out in kUnknown instead of the root's caller: matching from one position
// without knowing who called its rule (what token_masks.h caches). When such a rule ends, the
// walk goes on at its only call site if it has one, and otherwise the set records that it
// "popped": what comes next depends on the stack below.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/byte_grammar.h"

namespace brisk::grammar {

class StackSets {
 public:
  explicit StackSets(const ByteGrammar& g);

  static constexpr int32_t kBottom = -1, kUnknown = -2;
  static constexpr int32_t kDead = 0;  // the empty set: nothing matches
  // A set's flags: the grammar may end here; a stack over kUnknown returned past its bottom.
  static constexpr uint8_t kAccept = 1, kPopped = 2;
  // Past these a grammar is refused as too ambiguous or its state too large.
  static constexpr size_t kMaxSetNodes = 4096, kMaxNodes = size_t{1} << 24;

  int32_t start();                   // the root, called from outside
  int32_t at_position(int32_t pos);  // pos (a byte class element) over kUnknown
  int32_t of_node(int32_t node);     // the one stack whose top is `node`

  int32_t step(int32_t set, uint8_t byte) {
    const int32_t t = trans_[static_cast<size_t>(set) * n_eq_ + g_.byte_class[byte]];
    return t >= 0 ? t : compute(set, byte);
  }
  // Whether step(set, byte) is a lookup (computed before) rather than a closure to compute.
  bool known(int32_t set, uint8_t byte) const {
    return trans_[static_cast<size_t>(set) * n_eq_ + g_.byte_class[byte]] >= 0;
  }
  uint8_t flags(int32_t set) const { return sets_[static_cast<size_t>(set)].flags; }
  bool live(int32_t set) const { return sets_[static_cast<size_t>(set)].count > 0; }
  std::span<const int32_t> nodes(int32_t set) const {
    const Set& s = sets_[static_cast<size_t>(set)];
    return {set_nodes_.data() + s.begin, s.count};
  }
  int32_t node_pos(int32_t node) const { return nodes_[static_cast<size_t>(node)].pos; }

 private:
  struct Node {
    int32_t pos, parent;
  };
  struct Set {
    uint32_t begin, count;
    uint8_t flags;
  };
  struct VecHash {
    size_t operator()(const std::vector<int32_t>& v) const;
  };
  struct PairsHash {
    size_t operator()(const std::vector<std::pair<int32_t, int32_t>>& v) const;
  };
  int32_t compute(int32_t set, uint8_t byte);
  int32_t node(int32_t pos, int32_t parent);
  // Follows references and rule ends from the pending (pos, parent) pairs until every stack's
  // top is a byte class; the tops go to out_, the flags to out_flags_.
  void close();
  int32_t intern();  // the set of out_ and out_flags_

  const ByteGrammar& g_;
  size_t n_eq_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, int32_t> node_ids_;
  std::vector<Set> sets_;
  std::vector<int32_t> set_nodes_;
  std::unordered_map<std::vector<int32_t>, int32_t, VecHash> set_ids_;
  std::vector<int32_t> trans_;  // per set, per byte class: the next set, or -1 not yet known
  std::vector<std::pair<int32_t, int32_t>> work_;
  // The set each list of stacks that took a byte closes into (see compute()).
  std::unordered_map<std::vector<std::pair<int32_t, int32_t>>, int32_t, PairsHash> moves_;
  std::unordered_set<uint64_t> visited_;
  std::vector<int32_t> out_;
  uint8_t out_flags_ = 0;
};

}  // namespace brisk::grammar
