// The blocks a layer is built from, as an architecture's layer calls them (model/architecture.h).
// Each reads the residual stream through its own input norm and adds its output back to it. Two
// implementations run them: the forward pass over a ragged batch (model/forward.h) and the scalar
// reference over one token (model/reference.h), which tests hold the first to.
#pragma once

namespace brisk {

class LayerBlocks {
 public:
  virtual ~LayerBlocks() = default;
  // Self-attention over the sequence's cache: x += wo · attention(rope(q), rope(k), v) of
  // attn_norm(x), with the layer's q/k/v biases, per-head q/k norms, output bias and attention
  // sinks where it has them, over the last `window` positions in a sliding-window layer, with
  // scores soft-capped where the model caps them. Where the layer has a post-attention norm
  // (Gemma's sandwich norms), the output is normed by it before it is added.
  virtual void attention(int layer) = 0;
  // The gated feed-forward: x += down(glu(gate(ffn_norm(x)), up(ffn_norm(x)))), the model's
  // gated unit (SwiGLU, gpt-oss's clamped form or Gemma's GeGLU), normed by the layer's
  // post-feed-forward norm first where it has one (as is a mixture of experts' output).
  virtual void feed_forward(int layer) = 0;
  // A mixture of experts in the FFN's place: the router scores ffn_norm(x) over the experts and
  // picks the token's (ops/moe.h), each runs its gated feed-forward on it, and x += the weighted
  // sum of their outputs, taken in the token's own order of experts (best first), so that a token's
  // result does not depend on the tokens batched with it.
  virtual void mixture_of_experts(int layer) = 0;
};

}  // namespace brisk
