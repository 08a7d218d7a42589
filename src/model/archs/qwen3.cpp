// Qwen 3 (dense): Llama's layer with an RMS norm on each query and key head before the rotation,
// NeoX-layout rotary positions, no biases.
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"
#include "model/weights.h"

namespace brisk {

namespace {

class Qwen3 final : public Architecture {
 public:
  std::vector<std::string_view> names() const override { return {"qwen3"}; }
  void read(const ModelFile&, HParams& h) const override {
    h.rope_type = RopeType::Neox;
    h.qk_norm = true;
  }
  void bind(const ModelFile& mf, const HParams& h, int l, LayerWeights& L) const override {
    bind_attention(mf, h, l, L);
    bind_feed_forward(mf, h, l, L);
  }
  void layer(const HParams&, LayerBlocks& b, int l) const override {
    b.attention(l);
    b.feed_forward(l);
  }
};

}  // namespace

namespace archs {
const Architecture& qwen3() {
  static const Qwen3 a;
  return a;
}
}  // namespace archs

}  // namespace brisk
