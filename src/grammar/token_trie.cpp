#include "grammar/token_trie.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "tokenizer/unicode.h"

namespace brisk::grammar {

TokenTrie::TokenTrie(std::vector<std::string> bytes, std::vector<int32_t> eog)
    : bytes_(std::move(bytes)), eog_(std::move(eog)) {
  for (size_t id = 0; id < bytes_.size(); ++id) {
    // A longer token is left out rather than given a deeper trie (no vocabulary has one).
    if (bytes_[id].size() > UINT16_MAX) bytes_[id].clear();
    if (!bytes_[id].empty()) order_.push_back(static_cast<int32_t>(id));
  }
  std::sort(order_.begin(), order_.end(),
            [&](int32_t a, int32_t b) { return bytes_[size_t(a)] < bytes_[size_t(b)]; });
  rank_.assign(bytes_.size(), -1);
  for (size_t k = 0; k < order_.size(); ++k)
    rank_[static_cast<size_t>(order_[k])] = static_cast<int32_t>(k);
  nodes_.push_back({0, 0, 0, 0, 0});
  std::vector<uint32_t> path = {0};  // the open node at each depth
  const std::string* prev = nullptr;
  for (size_t k = 0; k < order_.size(); ++k) {
    const std::string& s = bytes_[static_cast<size_t>(order_[k])];
    size_t lcp = 0;
    if (prev)
      while (lcp < s.size() && lcp < prev->size() && s[lcp] == (*prev)[lcp]) ++lcp;
    order_lcp_.push_back(static_cast<uint16_t>(lcp));
    while (path.size() - 1 > lcp) {
      nodes_[path.back()].end = static_cast<uint32_t>(nodes_.size());
      path.pop_back();
    }
    for (size_t d = lcp + 1; d <= s.size(); ++d) {
      path.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back({static_cast<uint8_t>(s[d - 1]), static_cast<uint16_t>(d), 0,
                        static_cast<uint32_t>(k), 0});
    }
    ++nodes_[path.back()].n_here;
    max_depth_ = std::max(max_depth_, s.size());
    prev = &s;
  }
  while (!path.empty()) {
    nodes_[path.back()].end = static_cast<uint32_t>(nodes_.size());
    path.pop_back();
  }
  n_longer_.assign(max_depth_ + 1, 0);
  for (int32_t id : order_)
    for (size_t l = 0; l < bytes_[static_cast<size_t>(id)].size(); ++l) ++n_longer_[l];
  by_length_.resize(order_.size());
  std::iota(by_length_.begin(), by_length_.end(), 0u);
  std::stable_sort(by_length_.begin(), by_length_.end(), [&](uint32_t a, uint32_t b) {
    return bytes_[size_t(order_[a])].size() > bytes_[size_t(order_[b])].size();
  });
  nodes_.push_back(
      {0, 0, static_cast<uint32_t>(nodes_.size() + 1), static_cast<uint32_t>(order_.size()), 0});
  find_plain();
}

namespace {
// How many characters `b` holds if it is plain text (see max_plain()), else kNotPlain.
uint16_t plain_chars(const std::string& b) {
  const std::vector<uint32_t> cps = utf8_to_cpts(b);
  if (cps.size() >= TokenTrie::kNotPlain) return TokenTrie::kNotPlain;
  for (uint32_t c : cps)
    if (c < 0x20 || c == '"' || c == '\\' || (c >= 0xD800 && c <= 0xDFFF))
      return TokenTrie::kNotPlain;
  // A malformed sequence decodes to U+FFFD, whose encoding differs from it.
  if (cpts_to_utf8(cps) != b) return TokenTrie::kNotPlain;
  return static_cast<uint16_t>(cps.size());
}
}  // namespace

void TokenTrie::find_plain() {
  std::vector<uint16_t> chars(order_.size());
  for (size_t k = 0; k < order_.size(); ++k)
    chars[k] = plain_chars(bytes_[static_cast<size_t>(order_[k])]);
  // Children come after their parent in preorder, so a pass from the end sees them first.
  max_plain_.assign(nodes_.size(), 0);
  for (size_t v = n_nodes(); v-- > 0;) {
    const Node& nd = nodes_[v];
    uint16_t m = 0;
    for (uint32_t k = 0; k < nd.n_here; ++k) m = std::max(m, chars[nd.first + k]);
    for (uint32_t c = static_cast<uint32_t>(v) + 1; c < nd.end; c = nodes_[c].end)
      m = std::max(m, max_plain_[c]);
    max_plain_[v] = m;
  }
}

TokenTrie TokenTrie::from_tokenizer(const Tokenizer& tok, bool special_text) {
  const Vocab& v = tok.vocab();
  std::vector<std::string> bytes(static_cast<size_t>(v.size()));
  std::vector<int32_t> eog;
  for (int32_t id = 0; id < v.size(); ++id) {
    if (v.is_eog(id)) {
      eog.push_back(id);  // never text: allowed only where the grammar may end
      continue;
    }
    const TokenType t = v.types.empty() ? TokenType::Normal : v.types[static_cast<size_t>(id)];
    if (t == TokenType::Unknown || t == TokenType::Unused) continue;
    if (t == TokenType::Control && (!special_text || id == v.bos)) continue;
    bytes[static_cast<size_t>(id)] = tok.token_bytes(id, t == TokenType::Control);
  }
  return TokenTrie(std::move(bytes), std::move(eog));
}

}  // namespace brisk::grammar
