#include "engine/structured_output.h"

#include <algorithm>

#include "core/error.h"

namespace brisk {

namespace {
// Everything that decides a constraint's grammar, as one string.
std::string constraint_key(const grammar::Constraint& c) {
  std::string k = grammar::kind_name(c.kind);
  k += '\0' + std::to_string(c.style.max_whitespace) + (c.style.compact ? "c" : "w") +
       (c.oneof_as_anyof ? "a" : "") + (c.special_text ? "s" : "") + '\0';
  k += c.text;
  for (const std::string& s : c.choices) k += '\0' + std::to_string(s.size()) + ':' + s;
  return k;
}
}  // namespace

std::shared_ptr<const grammar::TokenTrie> GrammarCache::trie(bool special_text) {
  std::lock_guard lk(mu_);
  auto& t = trie_[special_text ? 1 : 0];
  if (!t)
    t = std::make_shared<grammar::TokenTrie>(
        grammar::TokenTrie::from_tokenizer(tok_, special_text));
  return t;
}

std::shared_ptr<const grammar::CompiledGrammar> GrammarCache::get(const grammar::Constraint& c) {
  const std::string key = constraint_key(c);
  {
    std::lock_guard lk(mu_);
    for (auto it = lru_.begin(); it != lru_.end(); ++it)
      if (it->first == key) {
        lru_.splice(lru_.begin(), lru_, it);
        return it->second;
      }
  }
  // Compiled outside the lock: a slow schema (its compiler has a time budget) must not hold up
  // requests with other constraints. Two threads may compile the same one; the later wins.
  auto g = std::make_shared<const grammar::CompiledGrammar>(grammar::constraint_grammar(c),
                                                            trie(c.special_text));
  ++n_compiled_;
  std::lock_guard lk(mu_);
  lru_.emplace_front(key, g);
  if (lru_.size() > kMaxEntries) lru_.pop_back();
  return g;
}

// The mask covers the model's ids and the tokenizer's, whichever are more: ids only the model has
// (padding rows) stay refused, and bits past the model's are never read.
SeqGrammar::SeqGrammar(std::shared_ptr<const grammar::CompiledGrammar> g, int64_t n_vocab)
    : matcher_(std::move(g)),
      mask_(std::max(static_cast<size_t>((n_vocab + 63) / 64), matcher_.grammar().trie().n_words()),
            0) {}

const uint64_t* SeqGrammar::mask() {
  if (!mask_valid_) {
    std::fill(mask_.begin(), mask_.end(), 0);
    matcher_.fill_mask(mask_.data());
    mask_valid_ = true;
  }
  return mask_.data();
}

void SeqGrammar::moved() {
  mask_valid_ = false;
  forced_.reset();
}

void SeqGrammar::accept(int32_t token) {
  if (!matcher_.accept(token))
    fail("structured output: token {} was sampled where the grammar refuses it", token);
  moved();
}

void SeqGrammar::rollback(size_t n) {
  matcher_.rollback(n);
  moved();
}

const std::vector<int32_t>& SeqGrammar::forced_tokens(const Tokenizer& tok) {
  if (forced_) return *forced_;
  constexpr size_t kMaxForcedBytes = 256;
  const std::string forced = matcher_.forced_bytes(kMaxForcedBytes);
  std::vector<int32_t>& out = forced_.emplace();
  if (forced.empty()) return out;
  // Only tokens that spell the forced bytes exactly from the start (an encoder may normalize).
  size_t at = 0;
  for (int32_t t : tok.encode_continuation(forced)) {
    const std::string b = tok.token_bytes(t);
    if (b.empty() || forced.compare(at, b.size(), b) != 0) break;
    out.push_back(t);
    at += b.size();
  }
  // Each must be allowed as a token where it falls (the grammar sees bytes; a token could still
  // be one it refuses, say one only allowed as an end of generation).
  size_t taken = 0;
  while (taken < out.size() && matcher_.accept(out[taken])) ++taken;
  out.resize(taken);
  const bool complete = taken > 0 && matcher_.done();
  matcher_.rollback(taken);
  if (!complete && !out.empty()) out.pop_back();
  return out;
}

}  // namespace brisk
