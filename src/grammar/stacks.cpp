#include "grammar/stacks.h"

#include <algorithm>

#include "core/error.h"

namespace brisk::grammar {

namespace {
uint64_t pair_key(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}
}  // namespace

size_t StackSets::VecHash::operator()(const std::vector<int32_t>& v) const {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
  for (int32_t x : v) h = (h ^ static_cast<uint32_t>(x)) * 0x100000001B3ull + (h >> 29);
  return static_cast<size_t>(h);
}

size_t StackSets::PairsHash::operator()(const std::vector<std::pair<int32_t, int32_t>>& v) const {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ v.size();
  for (auto [a, b] : v) h = (h ^ pair_key(a, b)) * 0x100000001B3ull + (h >> 29);
  return static_cast<size_t>(h);
}

StackSets::StackSets(const ByteGrammar& g)
    : g_(g), n_eq_(static_cast<size_t>(std::max(g.n_byte_classes, 1))) {
  // Set 0 is the dead set; every byte leads from it to itself.
  intern();
  std::fill(trans_.begin(), trans_.end(), kDead);
}

int32_t StackSets::node(int32_t pos, int32_t parent) {
  auto [it, fresh] = node_ids_.try_emplace(pair_key(pos, parent), 0);
  if (fresh) {
    if (nodes_.size() >= kMaxNodes)
      fail("grammar: the parser's state grew past {} stack entries (the limit)", kMaxNodes);
    it->second = static_cast<int32_t>(nodes_.size());
    nodes_.push_back({pos, parent});
  }
  return it->second;
}

void StackSets::close() {
  using K = ByteGrammar::Kind;
  visited_.clear();
  while (!work_.empty()) {
    const auto [pos, parent] = work_.back();
    work_.pop_back();
    const uint64_t key = pair_key(pos, parent);
    if (!visited_.insert(key).second) continue;
    const ByteGrammar::Elem e = g_.elems[static_cast<size_t>(pos)];
    if (e.kind == K::Bytes) {
      out_.push_back(node(pos, parent));
      if (out_.size() > kMaxSetNodes)
        fail(
            "grammar: more than {} parses are open at once (the grammar is too ambiguous); "
            "rewrite it so fewer alternatives match the same text",
            kMaxSetNodes);
    } else if (e.kind == K::Ref) {
      // A call in tail position returns straight to the caller's caller.
      const int32_t cont =
          g_.elems[static_cast<size_t>(pos) + 1].kind == K::End ? parent : node(pos + 1, parent);
      for (int32_t a : g_.alts[static_cast<size_t>(e.arg)]) work_.push_back({a, cont});
    } else if (parent == kBottom) {
      out_flags_ |= kAccept;
    } else if (parent == kUnknown) {
      const int32_t cs = g_.call_site[static_cast<size_t>(e.arg)];
      if (cs == ByteGrammar::kFromOutside)
        out_flags_ |= kAccept;
      else if (cs >= 0)
        work_.push_back({cs + 1, kUnknown});
      else if (cs == ByteGrammar::kManyCalls)
        out_flags_ |= kPopped;
    } else {
      const Node& p = nodes_[static_cast<size_t>(parent)];
      work_.push_back({p.pos, p.parent});
    }
  }
}

int32_t StackSets::intern() {
  std::sort(out_.begin(), out_.end());
  out_.erase(std::unique(out_.begin(), out_.end()), out_.end());
  out_.push_back(out_flags_);  // the key: the nodes, then the flags
  auto [it, fresh] = set_ids_.try_emplace(out_, static_cast<int32_t>(sets_.size()));
  out_.pop_back();
  if (fresh) {
    sets_.push_back(
        {static_cast<uint32_t>(set_nodes_.size()), static_cast<uint32_t>(out_.size()), out_flags_});
    set_nodes_.insert(set_nodes_.end(), out_.begin(), out_.end());
    trans_.resize(sets_.size() * n_eq_, -1);
  }
  out_.clear();
  out_flags_ = 0;
  return it->second;
}

int32_t StackSets::start() {
  for (int32_t a : g_.alts[static_cast<size_t>(g_.root)]) work_.push_back({a, kBottom});
  close();
  return intern();
}

int32_t StackSets::at_position(int32_t pos) {
  out_.push_back(node(pos, kUnknown));
  return intern();
}

int32_t StackSets::of_node(int32_t n) {
  out_.push_back(n);
  return intern();
}

// The next set depends only on which of the set's stacks take the byte, so bytes of different
// classes that the same stacks take (most bytes, from a set with a few literals and one loop) and
// sets that hand on the same stacks reuse one closure.
int32_t StackSets::compute(int32_t set, uint8_t byte) {
  for (int32_t n : nodes(set)) {
    const Node nd = nodes_[static_cast<size_t>(n)];
    const ByteGrammar::Elem e = g_.elems[static_cast<size_t>(nd.pos)];
    if (g_.classes[static_cast<size_t>(e.arg)].has(byte)) work_.push_back({nd.pos + 1, nd.parent});
  }
  int32_t next = kDead;
  if (!work_.empty()) {
    auto [it, fresh] = moves_.try_emplace(work_, 0);
    if (fresh) {
      close();
      it->second = intern();
    } else {
      work_.clear();
    }
    next = it->second;
  }
  trans_[static_cast<size_t>(set) * n_eq_ + g_.byte_class[byte]] = next;
  return next;
}

}  // namespace brisk::grammar
