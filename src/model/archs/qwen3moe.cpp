// Qwen 3's mixture of experts (Qwen3-30B-A3B, Qwen3-235B-A22B, Qwen3-Coder-30B-A3B): Qwen 3's
// attention (per-head q/k norms, NeoX rotary positions), and in place of the FFN a softmax router
// over the experts whose chosen weights are renormalised to sum to one (norm_topk_prob).
#include <algorithm>

#include "model/architecture.h"
#include "model/hparams.h"

namespace brisk {

namespace {

class Qwen3Moe final : public PreNormDecoder {
 public:
  std::vector<std::string_view> names() const override { return {"qwen3moe"}; }
  void read(const ModelFile& mf, HParams& h) const override {
    h.rope_type = RopeType::Neox;
    h.qk_norm = true;
    // Without expert_feed_forward_length, the width llama.cpp assumes.
    read_experts(
        mf, h, ExpertGating::Softmax, /*normalize=*/true,
        h.n_ff / std::max<int64_t>(1, mf.get_int("qwen3moe.expert_used_count").value_or(1)));
  }
};

}  // namespace

namespace archs {
const Architecture& qwen3moe() {
  static const Qwen3Moe a;
  return a;
}
}  // namespace archs

}  // namespace brisk
