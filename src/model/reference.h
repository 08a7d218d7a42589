// A deliberately simple forward pass for tests: one token at a time, every weight widened to f32,
// the scalar reference ops, a plain attention with a materialized score row. No batching, no
// threads, no cleverness: the optimized Forward is checked against it.
#pragma once

#include <vector>

#include "model/model.h"

namespace brisk {

class ReferenceForward {
 public:
  explicit ReferenceForward(const Model& m);
  // Logits for `token` at position `pos` (positions must be fed in order 0, 1, 2, ...).
  std::vector<float> step(int32_t token, int64_t pos);

 private:
  const Model& m_;
  std::vector<std::vector<float>> k_cache_, v_cache_;  // per layer: [pos][kv_dim]
};

}  // namespace brisk
