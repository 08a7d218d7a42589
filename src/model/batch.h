// A ragged batch: tokens of any number of sequences, each with its position; the forward pass
// returns logits for the tokens marked `logits`, in batch order.
#pragma once

#include <cstdint>
#include <vector>

namespace brisk {

struct Batch {
  std::vector<int32_t> token;
  std::vector<int64_t> pos;
  std::vector<int32_t> seq;
  std::vector<uint8_t> logits;

  void add(int32_t t, int64_t p, int32_t s, bool want_logits) {
    token.push_back(t);
    pos.push_back(p);
    seq.push_back(s);
    logits.push_back(want_logits ? 1 : 0);
  }
  void clear() {
    token.clear();
    pos.clear();
    seq.clear();
    logits.clear();
  }
  int64_t size() const { return static_cast<int64_t>(token.size()); }
};

}  // namespace brisk
