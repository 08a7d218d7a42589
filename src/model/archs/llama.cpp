// Llama 1-3 and Mistral (and the many fine-tunes that keep their shape): pre-norm attention with
// rotary positions in the original (interleaved-pair) layout, then a SwiGLU feed-forward. Some
// files add q/k/v biases or per-head q/k norms; they are taken when present.
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"
#include "model/weights.h"

namespace brisk {

namespace {

class Llama final : public Architecture {
 public:
  std::vector<std::string_view> names() const override { return {"llama", "mistral"}; }
  void read(const ModelFile& mf, HParams& h) const override {
    h.rope_type = RopeType::Norm;
    h.qkv_bias = has_tensor(mf, "blk.0.attn_q.bias");
    h.qk_norm = has_tensor(mf, "blk.0.attn_q_norm.weight");
  }
  void bind(const ModelFile& mf, const HParams& h, int l, LayerWeights& L) const override {
    bind_attention(mf, h, l, L);
    bind_feed_forward(mf, h, l, L);
  }
  void layer(LayerBlocks& b, int l) const override {
    b.attention(l);
    b.feed_forward(l);
  }
};

}  // namespace

namespace archs {
const Architecture& llama() {
  static const Llama a;
  return a;
}
}  // namespace archs

}  // namespace brisk
