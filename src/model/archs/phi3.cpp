// Microsoft's Phi-3, Phi-3.5 and Phi-4 (dense): Llama's layer with q, k and v in one fused
// matrix (attn_qkv, where the file fuses them) and gate and up in one (ffn_up, 2 x n_ff rows,
// gate first), rotary positions in the NeoX layout, and for the 128K-context models LongRoPE:
// per-dimension frequency factors, the short set within the original context and the long one
// beyond it (chosen by the context the model is run with, model/model.h's LoadOptions), and the
// file's attention factor on the rotated values. The files' sliding window is not applied, as
// llama.cpp does not apply it.
#include "core/error.h"
#include "model/architecture.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"
#include "model/weights.h"

namespace brisk {

namespace {

class Phi3 final : public PreNormDecoder {
 public:
  std::vector<std::string_view> names() const override { return {"phi3"}; }
  void read(const ModelFile& mf, HParams& h) const override {
    h.rope_type = RopeType::Neox;
    h.rope_scaling.original_context =
        mf.get_int(h.arch + ".rope.scaling.original_context_length").value_or(h.n_ctx_train);
    if (h.rope_scaling.original_context <= 0)
      fail("{}: {}.rope.scaling.original_context_length must be positive", mf.path, h.arch);
  }
  void bind(const ModelFile& mf, const HParams& h, int l, LayerWeights& L) const override {
    auto n = [l](std::string_view s) { return layer_tensor(l, s); };
    if (!has_tensor(mf, n("attn_qkv.weight"))) {
      bind_attention(mf, h, l, L);
    } else {
      L.attn_norm = bind_vector(mf, n("attn_norm.weight"), h.n_embd);
      const Tensor qkv =
          bind_matrix(mf, n("attn_qkv.weight"), h.n_embd, h.q_dim() + 2 * h.kv_dim());
      L.wq = matrix_rows(qkv, 0, h.q_dim());
      L.wk = matrix_rows(qkv, h.q_dim(), h.kv_dim());
      L.wv = matrix_rows(qkv, h.q_dim() + h.kv_dim(), h.kv_dim());
      L.wo = bind_matrix(mf, n("attn_output.weight"), h.q_dim(), h.n_embd);
    }
    L.ffn_norm = bind_vector(mf, n("ffn_norm.weight"), h.n_embd);
    const Tensor gate_up = bind_matrix(mf, n("ffn_up.weight"), h.n_embd, 2 * h.n_ff);
    L.ffn_gate = matrix_rows(gate_up, 0, h.n_ff);
    L.ffn_up = matrix_rows(gate_up, h.n_ff, h.n_ff);
    L.ffn_down = bind_matrix(mf, n("ffn_down.weight"), h.n_ff, h.n_embd);
  }
};

}  // namespace

namespace archs {
const Architecture& phi3() {
  static const Phi3 a;
  return a;
}
}  // namespace archs

}  // namespace brisk
