// Structured output in the engine, kept apart from the scheduler (as vLLM v1 keeps it): the
// constraints requests ask for, compiled against the model's vocabulary and shared by every
// request that sends the same one, and each sequence's place in its constraint, which the sampler
// consults as a TokenFilter.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/sampler.h"
#include "grammar/constraint.h"
#include "grammar/matcher.h"
#include "tokenizer/tokenizer.h"

namespace brisk {

// Compiles constraints on any thread (submit() runs on the caller's), keeping the most recently
// used: a client that sends one schema with every request pays for compiling it once. The
// vocabulary's trie is built on first use.
class GrammarCache {
 public:
  explicit GrammarCache(const Tokenizer& tok) : tok_(tok) {}
  // Throws an Error naming what is wrong (or cannot be enforced) in the constraint.
  std::shared_ptr<const grammar::CompiledGrammar> get(const grammar::Constraint& c);
  static constexpr size_t kMaxEntries = 32;
  int64_t n_compiled() const { return n_compiled_.load(); }

 private:
  std::shared_ptr<const grammar::TokenTrie> trie(bool special_text);

  const Tokenizer& tok_;
  std::mutex mu_;
  std::shared_ptr<const grammar::TokenTrie> trie_[2];  // without and with special tokens' text
  std::list<std::pair<std::string, std::shared_ptr<const grammar::CompiledGrammar>>> lru_;
  std::atomic<int64_t> n_compiled_{0};
};

// A sequence's place in its constraint: the matcher over the tokens it generated, and the mask
// of what may follow, computed only when the sampler asks and kept until the next token. A copy
// is a fork (n > 1).
class SeqGrammar final : public TokenFilter {
 public:
  SeqGrammar(std::shared_ptr<const grammar::CompiledGrammar> g, int64_t n_vocab);
  SeqGrammar(const SeqGrammar&) = default;

  bool allows(int32_t token) override { return matcher_.allows(token); }
  const uint64_t* mask() override;
  // Takes a token the sampler drew under this filter (anything else is a bug and throws).
  void accept(int32_t token);
  // Undoes the last n tokens (a drafter's speculative ones).
  void rollback(size_t n);
  bool ended() const { return matcher_.ended(); }  // an end-of-generation token was taken
  bool done() const { return matcher_.done(); }    // nothing may follow
  // Jump-forward: tokens spelling the bytes the grammar forces next, as the tokenizer splits
  // them, without the last one (text after it could merge with it into another token) unless
  // the grammar is complete after them. Not taken: each goes through accept() when emitted.
  // Kept until the next token.
  const std::vector<int32_t>& forced_tokens(const Tokenizer& tok);

 private:
  void moved();  // the state changed: the mask and the forced tokens are stale

  grammar::Matcher matcher_;
  std::vector<uint64_t> mask_;  // over the model's n_vocab ids
  bool mask_valid_ = false;
  std::optional<std::vector<int32_t>> forced_;
};

}  // namespace brisk
