// Grammar positions that classify the vocabulary alike. A bounded repetition (a string of at most
// 64 characters, at most 20 digits) is a chain of rules that differ only in how far the chain
// still goes, so each of its positions would cost a walk of the whole vocabulary trie on first
// use. A token of L bytes sees only the next few links, though: two positions whose grammar looks
// the same for any walk of L bytes classify every token of up to L bytes the same, and only
// longer tokens (few) need their own check. Found by partition refinement over the rules: rules
// are alike to depth d when they have the same elements, return to the same place and call rules
// alike to depth d minus the bytes matched before the call.
#pragma once

#include <cstdint>
#include <vector>

#include "grammar/byte_grammar.h"

namespace brisk::grammar {

struct SharedPositions {
  // Per element: the element whose classification it shares (itself when none), and the longest
  // token, in bytes, the shared classification holds for.
  std::vector<int32_t> canon;
  std::vector<uint16_t> limit;
};

// Depth past which positions are not told apart (tokens longer than this stay checked one by
// one); it bounds the work to this many refinement rounds.
inline constexpr int kMaxSharedDepth = 48;

SharedPositions find_shared_positions(const ByteGrammar& g);

}  // namespace brisk::grammar
