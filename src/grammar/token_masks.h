// What each token does from one grammar position, whoever called the position's rule: accepted
// (it matches there in every context), uncertain (some way of matching it runs past the end of
// the rule into a caller that several places share, so the stack below decides), or rejected.
// Computed once per position on first use by walking the vocabulary trie; a mask is then the
// union of its positions' accepted tokens plus the uncertain ones checked against the real stack
// (typically the few that close a string and go on). The idea is XGrammar's adaptive token mask
// cache; rules called from one place only are followed into their caller (stacks.h), so a loop
// like a JSON string's body leaves only the tokens that cross its closing quote uncertain.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "grammar/byte_grammar.h"
#include "grammar/shared_positions.h"
#include "grammar/stacks.h"
#include "grammar/token_trie.h"

namespace brisk::grammar {

struct PositionTokens {
  std::vector<uint64_t> accepted_bits;  // a mask, when many are accepted
  std::vector<int32_t> accepted;        // else their ids
  std::vector<int32_t> uncertain;       // in byte order
  std::vector<uint16_t> uncertain_lcp;  // bytes each shares with the one before
  size_t bytes() const {
    return accepted_bits.size() * 8 + accepted.size() * 4 + uncertain.size() * 6 + 64;
  }
};

class TokenMasks {
 public:
  TokenMasks(const ByteGrammar& g, const TokenTrie& trie);

  // The classification of every token at element `pos` (a byte class); thread-safe.
  std::shared_ptr<const PositionTokens> at(int32_t pos);
  // Past this the cached positions are dropped and recomputed as they come up again.
  static constexpr size_t kMaxCacheBytes = size_t{256} << 20;
  // A position shares another's classification when at most this many tokens are too long for it.
  static constexpr size_t kMaxNarrowed = 2048;

 private:
  std::shared_ptr<const PositionTokens> exact(int32_t pos);  // under mu_
  std::shared_ptr<const PositionTokens> compute(int32_t pos);
  // A position's classification from the one it shares (shared_positions.h): tokens longer than
  // `limit` bytes become uncertain.
  std::shared_ptr<const PositionTokens> narrow(const PositionTokens& full, size_t limit) const;
  void keep(size_t bytes);  // counts a cached entry, dropping them all past the budget
  // How many characters of plain text (TokenTrie::max_plain) every way from element `pos` takes
  // without dying, the first one among those its byte class starts, up to kMaxPlainReach: every
  // such plain token that short is accepted there.
  size_t plain_reach(int32_t pos);
  bool leads_into_open(int32_t pos) const;
  static constexpr size_t kMaxPlainReach = 32;
  // The work plain_reach() may spend on parser steps it must compute rather than look up (a unit
  // per stack of the set stepped) before it settles for the reach proven so far: past it, proving
  // more costs more than walking the tokens it would skip (a key position of an object with
  // hundreds of named properties carries every name's prefix).
  static constexpr size_t kMaxPlainSteps = 4096;
  enum class Takes { kAll, kNo, kUnknown };  // kUnknown: the budget ran out
  // The sets one plain character leads to from `set` (the characters `first` takes, when given),
  // added to `out`; remembered per set when `first` is not given.
  Takes plain_successors(int32_t set, const ByteSet* first, size_t& budget,
                         std::vector<int32_t>& out);
  Takes takes_every(int32_t set, const std::vector<std::vector<uint8_t>>& seq, size_t i,
                    const ByteSet* first, std::vector<int32_t>& out, size_t& budget);

  const ByteGrammar& g_;
  const TokenTrie& trie_;
  std::mutex mu_;
  StackSets walker_;
  const SharedPositions shared_;
  // Plain text's UTF-8 forms: per form, per byte, one byte of each byte class it may be.
  std::vector<std::vector<std::vector<uint8_t>>> plain_forms_;
  std::unordered_map<int32_t, std::vector<int32_t>> plain_next_;  // see plain_successors()
  std::vector<std::shared_ptr<const PositionTokens>> cache_;
  std::vector<std::shared_ptr<const PositionTokens>> narrowed_;  // per position sharing another's
  size_t cache_bytes_ = 0;
};

}  // namespace brisk::grammar
