// A deliberately simple forward pass for tests: one token at a time, every weight widened to f32,
// the scalar reference ops, a plain attention with a materialized score row. No batching, no
// threads, no cleverness: the optimized Forward is checked against it. It runs each architecture's
// layer through the same blocks (model/blocks.h), written plainly.
#pragma once

#include <cstdint>
#include <vector>

#include "model/blocks.h"
#include "model/model.h"

namespace brisk {

class ReferenceForward : private LayerBlocks {
 public:
  explicit ReferenceForward(const Model& m);
  // Logits for `token` at position `pos` (positions must be fed in order 0, 1, 2, ...).
  std::vector<float> step(int32_t token, int64_t pos);

 private:
  void attention(int layer) override;
  void feed_forward(int layer) override;
  void mixture_of_experts(int layer) override;
  // The model's gated unit (ops/activation.h) on the scalar reference ops.
  void glu(const float* gate, const float* up, float* out, int64_t n) const;
  // x += a block's output o, normed first by its post-norm where the layer has one.
  void add_output(std::vector<float>& o, const std::vector<float>& post_norm);

  const Model& m_;
  std::vector<std::vector<float>> k_cache_, v_cache_;  // per layer: [pos][kv_dim]
  std::vector<float> x_;                               // the residual stream
  int64_t pos_ = 0;                                    // the token's position
};

}  // namespace brisk
