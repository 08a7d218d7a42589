// Llama 1-3 and Mistral (and the many fine-tunes that keep their shape): pre-norm attention with
// rotary positions in the original (interleaved-pair) layout, then a SwiGLU feed-forward. Some
// files add q/k/v biases or per-head q/k norms; they are taken when present. Mixtral is this
// layer with a mixture of experts in the FFN's place (llama.expert_count): a softmax router whose
// chosen weights are renormalised.
#include "model/architecture.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"

namespace brisk {

namespace {

class Llama final : public PreNormDecoder {
 public:
  std::vector<std::string_view> names() const override { return {"llama", "mistral"}; }
  void read(const ModelFile& mf, HParams& h) const override {
    h.rope_type = RopeType::Norm;
    h.qkv_bias = has_tensor(mf, "blk.0.attn_q.bias");
    h.qk_norm = has_tensor(mf, "blk.0.attn_q_norm.weight");
    if (mf.get_int(h.arch + ".expert_count").value_or(0) > 0)
      read_experts(mf, h, ExpertGating::Softmax, /*normalize=*/true, h.n_ff);
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
