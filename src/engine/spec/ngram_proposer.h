// Prompt lookup, a proposer without a model: the tokens that followed the latest earlier
// occurrence of the sequence's last n tokens (prompt and output alike). Strong wherever the output
// repeats its context: code edits, quotes, retrieval-augmented answers, summaries.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace brisk {

struct NgramConfig {
  int n_max = 4;  // the longest suffix tried first: longer matches predict better
  int n_min = 1;
};

// Up to `max_tokens` proposed continuations of `tokens` (none when no suffix of n_min..n_max
// tokens occurred before). The longest matching suffix wins, at its most recent occurrence that
// is followed by max_tokens tokens (or else by the most).
std::vector<int32_t> ngram_propose(std::span<const int32_t> tokens, const NgramConfig& c,
                                   int max_tokens);

}  // namespace brisk
