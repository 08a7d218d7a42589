// Google's Gemma 2 (2B, 9B, 27B): sliding-window attention (4096 unless the file says) on every
// other layer from the first, attention scores soft-capped at 50 and the final logits at 30
// (cap tanh(x / cap)), sandwich norms (each block's output is RMS-normed before it joins the
// residual stream), GeGLU with GELU's tanh form, token embeddings scaled by sqrt(n_embd), and the
// classifier tied to the embeddings. The 27B scales queries by 1/sqrt(n_embd / n_head) rather than
// 1/sqrt(head_dim), as Gemma's reference code does; llama.cpp tells it by its 46 layers, and so
// does this file.
#include "model/archs/gemma_common.h"

namespace brisk {

namespace {

class Gemma2 final : public GemmaDecoder {
 public:
  std::vector<std::string_view> names() const override { return {"gemma2"}; }

  void read(const ModelFile& mf, HParams& h) const override {
    read_gemma(mf, h, /*layers_27b=*/46);
    read_sliding_window(mf, h, /*default_period=*/2, /*default_window=*/4096);
    h.attn_softcap = read_softcap(mf, h, "attn_logit_softcapping", 50.0f);
    h.final_softcap = read_softcap(mf, h, "final_logit_softcapping", 30.0f);
    // Local layers rotate as the global ones unless the file gives them their own base.
    if (auto b = mf.get_float(h.arch + ".rope.freq_base_swa"))
      h.rope_theta_windowed = checked_rope_base(mf, h, *b);
  }
};

}  // namespace

namespace archs {
const Architecture& gemma2() {
  static const Gemma2 a;
  return a;
}
}  // namespace archs

}  // namespace brisk
