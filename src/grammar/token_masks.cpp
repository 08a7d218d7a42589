#include "grammar/token_masks.h"

#include <algorithm>
#include <bit>

namespace brisk::grammar {

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
  std::vector<uint32_t> ranks;
  ranks.reserve(full.uncertain.size() + longer.size());
  for (int32_t t : full.uncertain) ranks.push_back(static_cast<uint32_t>(trie_.rank(t)));
  const size_t n_full = ranks.size();
  ranks.insert(ranks.end(), longer.begin(), longer.end());
  std::inplace_merge(ranks.begin(), ranks.begin() + static_cast<ptrdiff_t>(n_full), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  pt->accepted_bits = full.accepted_bits;
  for (uint32_t k : longer) {
    const int32_t t = order[k];
    if (!pt->accepted_bits.empty()) pt->accepted_bits[size_t(t) >> 6] &= ~(uint64_t{1} << (t & 63));
  }
  for (int32_t t : full.accepted)
    if (trie_.bytes(t).size() <= limit) pt->accepted.push_back(t);
  pt->uncertain.reserve(ranks.size());
  pt->uncertain_lcp.reserve(ranks.size());
  const std::string* prev = nullptr;
  for (uint32_t k : ranks) {
    const std::string& b = trie_.bytes(order[k]);
    size_t lcp = 0;
    if (prev)
      while (lcp < b.size() && lcp < prev->size() && b[lcp] == (*prev)[lcp]) ++lcp;
    pt->uncertain.push_back(order[k]);
    pt->uncertain_lcp.push_back(static_cast<uint16_t>(lcp));
    prev = &b;
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
  left[0] = 0;
  std::vector<uint64_t> bits(trie_.n_words(), 0);  // the accepted tokens
  size_t n_accepted = 0;
  std::vector<uint32_t> uncertain;  // positions in order(): their common prefixes come from it
  auto add_uncertain = [&](uint32_t from, uint32_t to) {
    for (uint32_t k = from; k < to; ++k) uncertain.push_back(k);
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
      for (uint32_t k = 0; k < nd.n_here; ++k) {
        const int32_t t = order[nd.first + k];
        bits[size_t(t) >> 6] |= uint64_t{1} << (t & 63);
      }
      n_accepted += nd.n_here;
    } else if (left[d - 1]) {
      add_uncertain(nd.first, nd.first + nd.n_here);
    }
    ++i;
  }
  // Many accepted tokens stay a mask; few become a list.
  if (n_accepted > static_cast<size_t>(trie_.n_vocab()) / 32) {
    pt->accepted_bits = std::move(bits);
  } else {
    pt->accepted.reserve(n_accepted);
    for (size_t w = 0; w < bits.size(); ++w)
      for (uint64_t b = bits[w]; b; b &= b - 1)
        pt->accepted.push_back(
            static_cast<int32_t>(w * 64 + static_cast<size_t>(std::countr_zero(b))));
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
