#include "grammar/matcher.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"

namespace brisk::grammar {

CompiledGrammar::CompiledGrammar(const Grammar& g, std::shared_ptr<const TokenTrie> trie)
    : bg_(lower_to_bytes(g)),
      trie_(std::move(trie)),
      masks_(std::make_unique<TokenMasks>(bg_, *trie_)) {}

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> g)
    : g_(std::move(g)), stacks_(g_->bytes()) {
  history_.push_back(stacks_.start());
}

Matcher::Matcher(const Matcher& o)
    : g_(o.g_), stacks_(o.stacks_), history_(o.history_), ended_(o.ended_) {}

bool Matcher::is_eog(int32_t token) const {
  const auto& eog = g_->trie().eog();
  return std::find(eog.begin(), eog.end(), token) != eog.end();
}

bool Matcher::allows(int32_t token) {
  if (ended_ || token < 0 || token >= g_->trie().n_vocab()) return false;
  if (is_eog(token)) return can_end();
  const std::string& b = g_->trie().bytes(token);
  return !b.empty() && ok(walk(history_.back(), b));
}

bool Matcher::accept(int32_t token) {
  if (!allows(token)) return false;
  if (is_eog(token)) {
    ended_ = true;
    history_.push_back(history_.back());
    return true;
  }
  history_.push_back(walk(history_.back(), g_->trie().bytes(token)));
  return true;
}

size_t Matcher::accept_bytes(std::string_view bytes) {
  int32_t set = history_.back();
  size_t n = 0;
  for (; n < bytes.size(); ++n) {
    const int32_t next = stacks_.step(set, static_cast<uint8_t>(bytes[n]));
    if (next == StackSets::kDead) break;
    set = next;
  }
  history_.push_back(set);
  return n;
}

void Matcher::rollback(size_t n) {
  if (n > n_accepted()) fail("grammar: cannot undo {} tokens of {}", n, n_accepted());
  history_.resize(history_.size() - n);
  ended_ = false;
}

bool Matcher::can_end() const {
  return !ended_ && (stacks_.flags(history_.back()) & StackSets::kAccept);
}

bool Matcher::done() const {
  return ended_ || !stacks_.live(history_.back());
}

// The uncertain tokens of a top node that its real stack allows, remembered per node: a loop (a
// string's body) keeps the same top node for many tokens in a row.
const std::vector<int32_t>& Matcher::uncertain_allowed(int32_t node, const PositionTokens& pt) {
  if (auto it = uncertain_memo_.find(node); it != uncertain_memo_.end()) return it->second;
  if (uncertain_memo_.size() >= kMaxMemoNodes) uncertain_memo_.clear();
  std::vector<int32_t>& out = uncertain_memo_[node];
  const TokenTrie& trie = g_->trie();
  path_.resize(trie.max_depth() + 1);
  path_[0] = stacks_.of_node(node);
  size_t dead = SIZE_MAX;  // the depth where the last token's path died
  for (size_t k = 0; k < pt.uncertain.size(); ++k) {
    const int32_t t = pt.uncertain[k];
    const size_t lcp = pt.uncertain_lcp[k];
    if (lcp >= dead) continue;  // it shares the prefix that died
    dead = SIZE_MAX;
    const std::string& b = trie.bytes(t);
    for (size_t d = lcp; d < b.size(); ++d) {
      path_[d + 1] = stacks_.step(path_[d], static_cast<uint8_t>(b[d]));
      if (!ok(path_[d + 1])) {
        dead = d + 1;
        break;
      }
    }
    if (dead == SIZE_MAX) out.push_back(t);
  }
  return out;
}

void Matcher::fill_mask(uint64_t* mask) {
  const TokenTrie& trie = g_->trie();
  const size_t words = trie.n_words();
  std::memset(mask, 0, words * sizeof(uint64_t));
  if (ended_) return;
  const int32_t cur = history_.back();
  seen_.clear();
  // Copied: checking uncertain tokens adds sets, which may move the one being read.
  const auto span = stacks_.nodes(cur);
  tops_.assign(span.begin(), span.end());
  for (int32_t node : tops_) {
    const int32_t pos = stacks_.node_pos(node);
    const auto pt = g_->masks().at(pos);
    if (std::find(seen_.begin(), seen_.end(), pos) == seen_.end()) {
      seen_.push_back(pos);
      if (!pt->accepted_bits.empty())
        for (size_t w = 0; w < words; ++w) mask[w] |= pt->accepted_bits[w];
      for (int32_t t : pt->accepted) mask[size_t(t) >> 6] |= uint64_t{1} << (t & 63);
    }
    if (!pt->uncertain.empty())
      for (int32_t t : uncertain_allowed(node, *pt))
        mask[size_t(t) >> 6] |= uint64_t{1} << (t & 63);
  }
  if (can_end())
    for (int32_t t : trie.eog()) mask[size_t(t) >> 6] |= uint64_t{1} << (t & 63);
}

std::string Matcher::forced_bytes(size_t max) {
  std::string out;
  int32_t set = history_.back();
  const ByteGrammar& bg = g_->bytes();
  while (out.size() < max && !(stacks_.flags(set) & StackSets::kAccept) && stacks_.live(set)) {
    ByteSet any;
    for (int32_t node : stacks_.nodes(set)) {
      const ByteSet& c =
          bg.classes[static_cast<size_t>(bg.elems[size_t(stacks_.node_pos(node))].arg)];
      for (size_t w = 0; w < 4; ++w) any.w[w] |= c.w[w];
    }
    int n = 0, only = -1;
    for (int b = 0; b < 256 && n < 2; ++b)
      if (any.has(static_cast<uint8_t>(b))) ++n, only = b;
    if (n != 1) break;
    out += static_cast<char>(only);
    set = stacks_.step(set, static_cast<uint8_t>(only));
  }
  return out;
}

}  // namespace brisk::grammar
