// A constraint compiled for one vocabulary, and the per-sequence matcher that follows a
// generation through it: which tokens may come next (a mask over the vocabulary), whether a token
// is allowed, taking a token, undoing the last ones (a rejected speculative draft), and the bytes
// the grammar forces next.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/byte_grammar.h"
#include "grammar/stacks.h"
#include "grammar/token_masks.h"
#include "grammar/token_trie.h"

namespace brisk::grammar {

// Immutable once built (its position cache fills itself, thread-safely); shared by every
// sequence that uses the constraint.
class CompiledGrammar {
 public:
  CompiledGrammar(const Grammar& g, std::shared_ptr<const TokenTrie> trie);
  const ByteGrammar& bytes() const { return bg_; }
  const TokenTrie& trie() const { return *trie_; }
  TokenMasks& masks() const { return *masks_; }

 private:
  ByteGrammar bg_;
  std::shared_ptr<const TokenTrie> trie_;
  std::unique_ptr<TokenMasks> masks_;
};

class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const CompiledGrammar> g);
  Matcher(const Matcher& o);  // a fork: the same state and a copy of the memo
  Matcher& operator=(const Matcher&) = delete;

  // Takes a token if the grammar allows it there (an end-of-generation token only where the
  // grammar may end); false and nothing changed otherwise.
  bool accept(int32_t token);
  bool allows(int32_t token);  // the same without taking it
  // Takes bytes; returns how many matched before the first refused one (all of them: size()).
  size_t accept_bytes(std::string_view bytes);
  // Undoes the last n accepted tokens (or accept_bytes calls).
  void rollback(size_t n);
  size_t n_accepted() const { return history_.size() - 1; }

  // Sets bit t of `mask` (trie().n_words() words) for each token allowed next.
  void fill_mask(uint64_t* mask);
  bool can_end() const;                  // the grammar may end here
  bool done() const;                     // it must: nothing can follow
  bool ended() const { return ended_; }  // an end-of-generation token was taken
  // The bytes every continuation starts with (at most max): what the grammar forces next.
  std::string forced_bytes(size_t max);

  const CompiledGrammar& grammar() const { return *g_; }

 private:
  int32_t walk(int32_t set, std::string_view bytes) {
    for (char c : bytes) {
      set = stacks_.step(set, static_cast<uint8_t>(c));
      if (set == StackSets::kDead) break;
    }
    return set;
  }
  bool ok(int32_t set) const { return set != StackSets::kDead; }
  bool is_eog(int32_t token) const;
  const std::vector<int32_t>& uncertain_allowed(int32_t node, const PositionTokens& pt);
  static constexpr size_t kMaxMemoNodes = 256;

  std::shared_ptr<const CompiledGrammar> g_;
  StackSets stacks_;
  std::vector<int32_t> history_;  // the set after each accepted token, the start first
  bool ended_ = false;
  std::vector<int32_t> path_;  // scratch: sets along an uncertain token
  std::vector<int32_t> seen_;
  std::vector<int32_t> tops_;
  std::unordered_map<int32_t, std::vector<int32_t>>
      uncertain_memo_;  // scratch: positions whose accepted tokens are in the mask
};

}  // namespace brisk::grammar
