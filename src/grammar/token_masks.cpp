#include "grammar/token_masks.h"

namespace brisk::grammar {

std::shared_ptr<const PositionTokens> TokenMasks::at(int32_t pos) {
  std::lock_guard lk(mu_);
  if (cache_.empty()) cache_.resize(g_.elems.size());
  auto& slot = cache_[static_cast<size_t>(pos)];
  if (slot) return slot;
  auto pt = compute(pos);
  if (cache_bytes_ + pt->bytes() > kMaxCacheBytes) {
    for (auto& c : cache_) c.reset();
    cache_bytes_ = 0;
  }
  cache_bytes_ += pt->bytes();
  return slot = std::move(pt);
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
  left[0] = 0;
  auto add_uncertain = [&](uint32_t from, uint32_t to) {
    for (uint32_t k = from; k < to; ++k) pt->uncertain.push_back(order[k]);
  };
  for (size_t i = 1; i < trie_.n_nodes();) {
    const TokenTrie::Node& nd = nodes[i];
    const size_t d = nd.depth;
    const int32_t s = walker_.step(set[d - 1], nd.byte);
    if (s == StackSets::kDead) {
      if (left[d - 1]) add_uncertain(nd.first, nodes[nd.end].first);
      i = nd.end;
      continue;
    }
    const uint8_t f = walker_.flags(s);
    set[d] = s;
    left[d] = left[d - 1] | ((f & StackSets::kPopped) ? 1 : 0);
    if (walker_.live(s) || f) {
      for (uint32_t k = 0; k < nd.n_here; ++k) pt->accepted.push_back(order[nd.first + k]);
    } else if (left[d - 1]) {
      add_uncertain(nd.first, nd.first + nd.n_here);
    }
    ++i;
  }
  if (pt->accepted.size() > static_cast<size_t>(trie_.n_vocab()) / 32) {
    pt->accepted_bits.assign(trie_.n_words(), 0);
    for (int32_t t : pt->accepted) pt->accepted_bits[size_t(t) >> 6] |= uint64_t{1} << (t & 63);
    pt->accepted.clear();
    pt->accepted.shrink_to_fit();
  }
  pt->uncertain_lcp.resize(pt->uncertain.size());
  for (size_t k = 1; k < pt->uncertain.size(); ++k) {
    const std::string& a = trie_.bytes(pt->uncertain[k - 1]);
    const std::string& b = trie_.bytes(pt->uncertain[k]);
    size_t l = 0;
    while (l < a.size() && l < b.size() && a[l] == b[l]) ++l;
    pt->uncertain_lcp[k] = static_cast<uint16_t>(l);
  }
  return pt;
}

}  // namespace brisk::grammar
