// OpenAI's gpt-oss (gpt-oss-20b, gpt-oss-120b): a mixture of experts whose attention has biases on
// q, k, v and the output, a learned sink logit per head, and a 128-token sliding window on every
// other layer (from the first); rotary positions in the NeoX layout with YaRN scaling. The router
// (with a bias) picks the top experts and softmaxes over those alone; each expert's SwiGLU is the
// clamped form (alpha 1.702, limit 7), with biases on gate, up and down. The FFN's input norm is
// stored as post_attention_norm.
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"
#include "model/weights.h"

namespace brisk {

namespace {

class GptOss final : public Architecture {
 public:
  std::vector<std::string_view> names() const override { return {"gpt-oss"}; }

  void read(const ModelFile& mf, HParams& h) const override {
    h.rope_type = RopeType::Neox;
    h.qkv_bias = true;
    read_experts(mf, h, ExpertGating::SoftmaxChosen, /*normalize=*/false, h.n_ff);
    read_sliding_window(mf, h, /*default_period=*/2);
    h.glu = {GatedUnit::Kind::SwiGluClamped, 1.702f, 7.0f};
  }

  void bind(const ModelFile& mf, const HParams& h, int l, LayerWeights& L) const override {
    bind_attention(mf, h, l, L);
    L.bo = bind_vector(mf, layer_tensor(l, "attn_output.bias"), h.n_embd);
    L.sinks = bind_vector(mf, layer_tensor(l, "attn_sinks.weight"), h.n_head);
    bind_mixture_of_experts(mf, h, l, L, "post_attention_norm.weight");
  }

  void layer(const HParams&, LayerBlocks& b, int l) const override {
    b.attention(l);
    b.mixture_of_experts(l);
  }
};

}  // namespace

namespace archs {
const Architecture& gpt_oss() {
  static const GptOss a;
  return a;
}
}  // namespace archs

}  // namespace brisk
