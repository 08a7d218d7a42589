#include "grammar/token_masks.h"

#include <algorithm>
#include <array>
#include <bit>
#include <utility>

namespace brisk::grammar {

TokenMasks::TokenMasks(const ByteGrammar& g, const TokenTrie& trie)
    : g_(g), trie_(trie), walker_(g), shared_(find_shared_positions(g)) {
  for (const ByteSeq& seq : utf8_sequences({{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}})) {
    std::vector<std::vector<uint8_t>> form;
    for (auto [lo, hi] : seq) {
      std::vector<uint8_t> reps;
      std::array<bool, 256> seen{};
      for (int b = lo; b <= hi; ++b)
        if (!std::exchange(seen[g_.byte_class[static_cast<size_t>(b)]], true))
          reps.push_back(static_cast<uint8_t>(b));
      form.push_back(std::move(reps));
    }
    plain_forms_.push_back(std::move(form));
  }
}

TokenMasks::Takes TokenMasks::takes_every(int32_t set, const std::vector<std::vector<uint8_t>>& seq,
                                          size_t i, const ByteSet* first, std::vector<int32_t>& out,
                                          size_t& budget) {
  for (uint8_t b : seq[i]) {
    if (i == 0 && first && !first->has(b)) continue;
    if (!walker_.known(set, b)) {  // a closure costs about one unit per stack in the set
      const size_t cost = std::max<size_t>(1, walker_.nodes(set).size());
      if (cost > budget) return Takes::kUnknown;
      budget -= cost;
    }
    const int32_t s = walker_.step(set, b);
    if (s == StackSets::kDead) return Takes::kNo;
    if (i + 1 == seq.size()) {
      out.push_back(s);
    } else if (const Takes t = takes_every(s, seq, i + 1, nullptr, out, budget); t != Takes::kAll) {
      return t;
    }
  }
  return Takes::kAll;
}

TokenMasks::Takes TokenMasks::plain_successors(int32_t set, const ByteSet* first, size_t& budget,
                                               std::vector<int32_t>& out) {
  if (!first)
    if (auto it = plain_next_.find(set); it != plain_next_.end()) {
      if (it->second.size() == 1 && it->second[0] == StackSets::kDead) return Takes::kNo;
      out.insert(out.end(), it->second.begin(), it->second.end());
      return Takes::kAll;
    }
  std::vector<int32_t> next;
  for (const auto& form : plain_forms_)
    if (const Takes t = takes_every(set, form, 0, first, next, budget); t != Takes::kAll) {
      if (t == Takes::kNo && !first) plain_next_[set] = {StackSets::kDead};
      return t;
    }
  std::sort(next.begin(), next.end());
  next.erase(std::unique(next.begin(), next.end()), next.end());
  out.insert(out.end(), next.begin(), next.end());
  if (!first) plain_next_[set] = std::move(next);
  return Takes::kAll;
}

// Breadth first over the sets n characters lead to. Once a step leads only to sets already
// expanded, every set reachable is among them and takes every character: the reach is unbounded
// (a string's body loop gets there in one or two characters).
// One plain ASCII character, then a call in tail position of a rule its builder marked open
// (Rule::open): every plain text goes on from there, which stepping each of a name trie's
// dozens of byte classes through every node would cost milliseconds to prove.
bool TokenMasks::leads_into_open(int32_t pos) const {
  const auto& e = g_.elems;
  const size_t p = static_cast<size_t>(pos);
  if (p + 2 >= e.size() || e[p + 1].kind != ByteGrammar::Kind::Ref ||
      e[p + 2].kind != ByteGrammar::Kind::End || !g_.open[static_cast<size_t>(e[p + 1].arg)])
    return false;
  const ByteSet& c = g_.classes[static_cast<size_t>(e[p].arg)];
  for (int b = 0; b < 256; ++b)
    if (c.has(static_cast<uint8_t>(b)) && (b < 0x20 || b == '"' || b == '\\' || b >= 0x80))
      return false;
  return true;
}

size_t TokenMasks::plain_reach(int32_t pos) {
  constexpr size_t kMaxFrontier = 64;  // past this many ways at once the grammar is no string
  const ByteSet& first = g_.classes[static_cast<size_t>(g_.elems[static_cast<size_t>(pos)].arg)];
  if (leads_into_open(pos)) return kMaxPlainReach;
  std::vector<int32_t> frontier = {walker_.at_position(pos)}, next, expanded;
  size_t budget = kMaxPlainSteps;
  for (size_t n = 0; n < kMaxPlainReach; ++n) {
    next.clear();
    for (int32_t f : frontier)  // the first character: one where `pos` may start it
      if (plain_successors(f, n == 0 ? &first : nullptr, budget, next) != Takes::kAll) return n;
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    if (n > 0) {
      expanded.insert(expanded.end(), frontier.begin(), frontier.end());
      std::sort(expanded.begin(), expanded.end());
      if (std::includes(expanded.begin(), expanded.end(), next.begin(), next.end()))
        return kMaxPlainReach;
    }
    if (next.size() > kMaxFrontier) return n + 1;
    frontier.swap(next);
  }
  return kMaxPlainReach;
}

std::shared_ptr<const PositionTokens> TokenMasks::at(int32_t pos) {
  std::lock_guard lk(mu_);
  if (cache_.empty()) {
    cache_.resize(g_.elems.size());
    narrowed_.resize(g_.elems.size());
  }
  const size_t p = static_cast<size_t>(pos);
  const int32_t canon = shared_.canon[p];
  // Checking many long tokens one by one would cost more than the walk it saves.
  if (canon == pos || trie_.n_longer(shared_.limit[p]) > kMaxNarrowed) return exact(pos);
  if (narrowed_[p]) return narrowed_[p];
  const auto full = exact(canon);
  auto pt = shared_.limit[p] >= trie_.max_depth() ? full : narrow(*full, shared_.limit[p]);
  keep(pt->bytes());
  return narrowed_[p] = std::move(pt);
}

std::shared_ptr<const PositionTokens> TokenMasks::exact(int32_t pos) {
  auto& slot = cache_[static_cast<size_t>(pos)];
  if (slot) return slot;
  auto pt = compute(pos);
  keep(pt->bytes());
  return slot = std::move(pt);
}

void TokenMasks::keep(size_t bytes) {
  if (cache_bytes_ + bytes > kMaxCacheBytes) {
    for (auto& c : cache_) c.reset();
    for (auto& c : narrowed_) c.reset();
    plain_next_.clear();
    cache_bytes_ = 0;
  }
  cache_bytes_ += bytes;
}

// The uncertain tokens stay; the longer ones (few: see kMaxNarrowed) join them, in byte order.
std::shared_ptr<const PositionTokens> TokenMasks::narrow(const PositionTokens& full,
                                                         size_t limit) const {
  auto pt = std::make_shared<PositionTokens>();
  const auto& order = trie_.order();
  std::vector<uint32_t> longer(trie_.by_length().begin(),
                               trie_.by_length().begin() + trie_.n_longer(limit));
  std::sort(longer.begin(), longer.end());
  pt->accepted_bits = full.accepted_bits;
  for (uint32_t k : longer) {
    const int32_t t = order[k];
    if (!pt->accepted_bits.empty()) pt->accepted_bits[size_t(t) >> 6] &= ~(uint64_t{1} << (t & 63));
  }
  for (int32_t t : full.accepted)
    if (trie_.bytes(t).size() <= limit) pt->accepted.push_back(t);
  // Merged by rank; two neighbours that were neighbours in `full` keep its common prefix, the
  // others (next to a long token) compare their bytes.
  pt->uncertain.reserve(full.uncertain.size() + longer.size());
  pt->uncertain_lcp.reserve(full.uncertain.size() + longer.size());
  size_t i = 0, j = 0;
  bool prev_full = false;
  while (i < full.uncertain.size() || j < longer.size()) {
    const uint32_t ri = i < full.uncertain.size()
                            ? static_cast<uint32_t>(trie_.rank(full.uncertain[i]))
                            : UINT32_MAX;
    const uint32_t rj = j < longer.size() ? longer[j] : UINT32_MAX;
    const bool from_full = ri <= rj;
    if (ri == rj) ++j;  // in both
    const int32_t t = from_full ? full.uncertain[i] : order[rj];
    uint16_t lcp = 0;
    if (!pt->uncertain.empty()) {
      if (from_full && prev_full) {
        lcp = full.uncertain_lcp[i];
      } else {
        const std::string &a = trie_.bytes(pt->uncertain.back()), &b = trie_.bytes(t);
        while (lcp < a.size() && lcp < b.size() && a[lcp] == b[lcp]) ++lcp;
      }
    }
    pt->uncertain.push_back(t);
    pt->uncertain_lcp.push_back(lcp);
    prev_full = from_full;
    from_full ? ++i : ++j;
  }
  return pt;
}

// One pass over the trie in preorder. At depth d the walk holds the set after the token's first
// d bytes and whether some way of matching them has already left the rule for an unknown caller
// (then every longer token there is uncertain rather than rejected).
std::shared_ptr<const PositionTokens> TokenMasks::compute(int32_t pos) {
  auto pt = std::make_shared<PositionTokens>();
  const auto& nodes = trie_.nodes();
  const auto& order = trie_.order();
  std::vector<int32_t> set(trie_.max_depth() + 1);
  std::vector<uint8_t> left(trie_.max_depth() + 1);
  set[0] = walker_.at_position(pos);
  const ByteSet& first = g_.classes[static_cast<size_t>(g_.elems[static_cast<size_t>(pos)].arg)];
  left[0] = 0;
  // The accepted tokens as ranges of order(): a position that takes a few tokens (a literal's
  // next byte) costs its walk, not a pass over a vocabulary-sized mask.
  std::vector<std::pair<uint32_t, uint32_t>> accepted;
  auto accept = [&](uint32_t from, uint32_t to) {
    if (from == to) return;
    if (!accepted.empty() && accepted.back().second == from)
      accepted.back().second = to;
    else
      accepted.push_back({from, to});
  };
  // Plain tokens that short are all accepted (those the position may start): a subtree of
  // nothing else is taken whole.
  const size_t plain = plain_reach(pos);
  const auto& max_plain = trie_.max_plain();
  std::vector<uint32_t> uncertain;  // positions in order(): their common prefixes come from it
  auto add_uncertain = [&](uint32_t from, uint32_t to) {
    for (uint32_t k = from; k < to; ++k) uncertain.push_back(k);
  };
  for (size_t i = 1; i < trie_.n_nodes();) {
    const TokenTrie::Node& nd = nodes[i];
    const size_t d = nd.depth;
    // The first byte is pos's to take: the others need no step (each would be a closure of its
    // own the first time, some 70 of them in a grammar of many names).
    if (d == 1 && !first.has(nd.byte)) {
      i = nd.end;
      continue;
    }
    const int32_t s = walker_.step(set[d - 1], nd.byte);
    if (s == StackSets::kDead) {
      if (left[d - 1]) add_uncertain(nd.first, nodes[nd.end].first);
      i = nd.end;
      continue;
    }
    if (max_plain[i] <= plain) {
      accept(nd.first, nodes[nd.end].first);
      i = nd.end;
      continue;
    }
    const uint8_t f = walker_.flags(s);
    set[d] = s;
    left[d] = left[d - 1] | ((f & StackSets::kPopped) ? 1 : 0);
    if (walker_.live(s) || f) {
      accept(nd.first, nd.first + nd.n_here);
    } else if (left[d - 1]) {
      add_uncertain(nd.first, nd.first + nd.n_here);
    }
    ++i;
  }
  size_t n_accepted = 0;
  for (auto [from, to] : accepted) n_accepted += to - from;
  // Many accepted tokens stay a mask; few become a list.
  if (n_accepted > static_cast<size_t>(trie_.n_vocab()) / 32) {
    pt->accepted_bits.assign(trie_.n_words(), 0);
    for (auto [from, to] : accepted)
      for (uint32_t k = from; k < to; ++k)
        pt->accepted_bits[size_t(order[k]) >> 6] |= uint64_t{1} << (order[k] & 63);
  } else {
    pt->accepted.reserve(n_accepted);
    for (auto [from, to] : accepted)
      for (uint32_t k = from; k < to; ++k) pt->accepted.push_back(order[k]);
    std::sort(pt->accepted.begin(), pt->accepted.end());
  }
  // Each uncertain token's common prefix with the one before: the least adjacent common prefix
  // in between, read off the order (loading the tokens' own bytes cost most of a position with
  // half the vocabulary uncertain).
  const auto& lcp = trie_.order_lcp();
  pt->uncertain.resize(uncertain.size());
  pt->uncertain_lcp.assign(uncertain.size(), 0);
  for (size_t i = 0; i < uncertain.size(); ++i) {
    pt->uncertain[i] = order[uncertain[i]];
    if (i == 0) continue;
    uint16_t m = UINT16_MAX;
    for (uint32_t k = uncertain[i - 1] + 1; k <= uncertain[i]; ++k) m = std::min(m, lcp[k]);
    pt->uncertain_lcp[i] = m;
  }
  return pt;
}

}  // namespace brisk::grammar
