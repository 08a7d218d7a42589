// Google's Gemma 3 text models (270M to 27B): Gemma 2's layer (sandwich norms, GeGLU with GELU's
// tanh form, embeddings scaled by sqrt(n_embd)) with an RMS norm on each query and key head and no
// soft-capping of attention scores. Five local layers (a sliding window, 1024 tokens in the
// released files) for each global one; the local layers rotate with their own base (10000 unless
// the file gives rope.freq_base_swa) and without the global layers' scaling (linear, 8x, in 4B and
// up). Final logits are soft-capped only where the file says. The 27B's query scale is as Gemma
// 2's (model/archs/gemma2.cpp), told by its 62 layers.
#include "model/archs/gemma_common.h"

namespace brisk {

namespace {

class Gemma3 final : public GemmaDecoder {
 public:
  std::vector<std::string_view> names() const override { return {"gemma3"}; }

  void read(const ModelFile& mf, HParams& h) const override {
    read_gemma(mf, h, /*layers_27b=*/62);
    h.qk_norm = true;
    read_sliding_window(mf, h, /*default_period=*/6, /*default_window=*/0);
    if (h.window > 0)
      h.rope_theta_windowed =
          checked_rope_base(mf, h, mf.get_float(h.arch + ".rope.freq_base_swa").value_or(10000.0));
    h.final_softcap = read_softcap(mf, h, "final_logit_softcapping", 0.0f);
  }
};

}  // namespace

namespace archs {
const Architecture& gemma3() {
  static const Gemma3 a;
  return a;
}
}  // namespace archs

}  // namespace brisk
