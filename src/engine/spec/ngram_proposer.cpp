#include "engine/spec/ngram_proposer.h"

#include <algorithm>

namespace brisk {

std::vector<int32_t> ngram_propose(std::span<const int32_t> tokens, const NgramConfig& c,
                                   int max_tokens) {
  const auto len = static_cast<int64_t>(tokens.size());
  if (max_tokens <= 0) return {};
  for (int64_t n = std::min<int64_t>(c.n_max, len - 1); n >= std::max(c.n_min, 1); --n) {
    const auto suffix = tokens.subspan(static_cast<size_t>(len - n));
    // Occurrences ending before the suffix itself, latest first. The latest one whose continuation
    // is long enough wins; near the end (a run of one token, say) an earlier, longer one does.
    int64_t best = -1, best_count = 0;
    for (int64_t at = len - n - 1; at >= 0 && best_count < max_tokens; --at) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + at)) continue;
      const int64_t count = std::min<int64_t>(max_tokens, len - at - n);
      if (count > best_count) best = at + n, best_count = count;
    }
    if (best >= 0) return {tokens.begin() + best, tokens.begin() + best + best_count};
  }
  return {};
}

}  // namespace brisk
