// Qwen 2 and 2.5: Llama's layer with biases on q, k and v, and rotary positions in the NeoX
// (split-half) layout.
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"
#include "model/weights.h"

namespace brisk {

namespace {

class Qwen2 final : public Architecture {
 public:
  std::vector<std::string_view> names() const override { return {"qwen2"}; }
  void read(const ModelFile&, HParams& h) const override {
    h.rope_type = RopeType::Neox;
    h.qkv_bias = true;
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
const Architecture& qwen2() {
  static const Qwen2 a;
  return a;
}
}  // namespace archs

}  // namespace brisk
