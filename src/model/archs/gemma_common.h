// What Gemma 2 and Gemma 3 share (model/archs/gemma2.cpp, gemma3.cpp): the hyper-parameters read
// alike and the layer, attention then a GeGLU feed-forward, each block's output RMS-normed
// (post_attention_norm, post_ffw_norm) before it joins the residual stream.
#pragma once

#include <cmath>
#include <string>

#include "core/error.h"
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"
#include "model/weights.h"

namespace brisk {

class GemmaDecoder : public Architecture {
 public:
  void bind(const ModelFile& mf, const HParams& h, int l, LayerWeights& L) const override {
    bind_attention(mf, h, l, L);
    L.attn_post_norm = bind_vector(mf, layer_tensor(l, "post_attention_norm.weight"), h.n_embd);
    bind_feed_forward(mf, h, l, L);
    L.ffn_post_norm = bind_vector(mf, layer_tensor(l, "post_ffw_norm.weight"), h.n_embd);
  }

  void layer(const HParams&, LayerBlocks& b, int l) const override {
    b.attention(l);
    b.feed_forward(l);
  }

 protected:
  // The shared reading: GELU's gate, sqrt(n_embd) on the embeddings, the query scale (the 27B's,
  // told by its layer count as llama.cpp tells it, 1/sqrt(n_embd / n_head); else 1/sqrt(head_dim)).
  static void read_gemma(const ModelFile&, HParams& h, int64_t layers_27b) {
    h.rope_type = RopeType::Neox;
    h.glu = {GatedUnit::Kind::GeGluTanh};
    h.embd_scale = std::sqrt(static_cast<float>(h.n_embd));
    if (h.n_layer == layers_27b)
      h.attn_scale = 1.0f / std::sqrt(static_cast<float>(h.n_embd / h.n_head));
  }
  // {arch}.{key}, else `fallback`; 0 means none, as llama.cpp reads it.
  static float read_softcap(const ModelFile& mf, const HParams& h, const std::string& key,
                            float fallback) {
    const double v = mf.get_float(h.arch + "." + key).value_or(fallback);
    if (!(v >= 0 && v < 1e6)) fail("{}: {}.{} = {} is out of range", mf.path, h.arch, key, v);
    return static_cast<float>(v);
  }
  static float checked_rope_base(const ModelFile& mf, const HParams& h, double base) {
    if (!(base > 1 && base < 1e12))
      fail("{}: {}.rope.freq_base_swa = {} is out of range", mf.path, h.arch, base);
    return static_cast<float>(base);
  }
};

}  // namespace brisk
