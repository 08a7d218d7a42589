// A grammar lowered to bytes and flattened for matching. Tokens are byte strings that may split a
// UTF-8 character, so each set of code points becomes the byte sequences that encode it; small
// rules without references (a character class's encodings, an escape, `[0-9a-f]{4}`) are inlined
// where they are used, so a loop over them stays in one rule and its tokens can be judged without
// knowing who called it (see token_masks.h).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace brisk::grammar {

// A set of bytes.
struct ByteSet {
  std::array<uint64_t, 4> w{};
  bool has(uint8_t b) const { return (w[b >> 6] >> (b & 63)) & 1; }
  void add(uint8_t b) { w[b >> 6] |= uint64_t{1} << (b & 63); }
  void add_range(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) add(static_cast<uint8_t>(b));
  }
  bool operator==(const ByteSet&) const = default;
};

// The byte sequences (each a list of byte ranges, one per byte) that encode exactly the code
// points of `ranges` in UTF-8; surrogates, which UTF-8 cannot carry, are left out.
using ByteSeq = std::vector<std::pair<uint8_t, uint8_t>>;
std::vector<ByteSeq> utf8_sequences(const std::vector<CharRange>& ranges);

struct ByteGrammar {
  enum class Kind : uint8_t { Bytes, Ref, End };
  struct Elem {
    Kind kind;
    int32_t arg;  // Bytes: a class; Ref: the rule it calls; End: the rule it ends
  };
  // Every alternative of every rule as elements in a row, each alternative closed by an End.
  std::vector<Elem> elems;
  std::vector<ByteSet> classes;
  std::vector<std::vector<int32_t>> alts;  // per rule: the element each alternative starts at
  std::vector<std::string> names;          // per rule, for errors
  std::vector<bool> open;                  // per rule: Rule::open (false for helper rules)
  // Per rule: where it returns to when nothing says who called it: the Ref element of its one
  // continuation (a call in tail position counts as its caller's continuations), kFromOutside
  // when that is the root's caller, kNoCall or kManyCalls.
  static constexpr int32_t kNoCall = -1, kManyCalls = -2, kFromOutside = -3;
  std::vector<int32_t> call_site;
  int32_t root = -1;
  // Bytes every class treats alike share an equivalence class, so a transition table needs one
  // entry per class instead of 256.
  std::array<uint8_t, 256> byte_class{};
  int n_byte_classes = 0;

  size_t n_rules() const { return alts.size(); }
};

// Lowers a checked grammar; only rules the root can reach are kept.
ByteGrammar lower_to_bytes(const Grammar& g);

}  // namespace brisk::grammar
