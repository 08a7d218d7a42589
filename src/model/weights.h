// The model's weights bound by name and checked against the hyper-parameters. Matrices stay in
// their stored type (views into the file); norms and biases are converted to f32 once.
#pragma once

#include <vector>

#include "core/metadata.h"
#include "model/hparams.h"
#include "model/split.h"

namespace brisk {

struct LayerWeights {
  std::vector<float> attn_norm, ffn_norm;
  Tensor wq, wk, wv, wo;
  std::vector<float> bq, bk, bv;      // empty unless hp.qkv_bias
  std::vector<float> q_norm, k_norm;  // empty unless hp.qk_norm
  std::vector<float> bo;              // the output projection's bias (gpt-oss), else empty
  std::vector<float> sinks;           // attention sinks, one per query head (gpt-oss), else empty
  // Sandwich norms (Gemma): RMS norms of the attention's and the feed-forward's outputs before
  // they join the residual stream; empty: none.
  std::vector<float> attn_post_norm, ffn_post_norm;
  Tensor ffn_gate, ffn_up, ffn_down;
  // Mixture of experts: the router (n_embd -> n_expert scores, with a bias where the model has
  // one) and each expert's SwiGLU, views into the file's stacked 3-D tensors.
  Tensor ffn_gate_inp;
  std::vector<float> ffn_gate_inp_b;
  struct Expert {
    Tensor gate, up, down;
    std::vector<float> gate_b, up_b, down_b;  // empty unless the model has expert biases
  };
  std::vector<Expert> experts;
};

struct Weights {
  Tensor token_embd;
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm;
  Tensor output;                       // token_embd when the classifier is tied
  std::vector<float> rope_freqs;       // GGUF rope_freqs (Llama 3.1) or LongRoPE's short factors
  std::vector<float> rope_freqs_long;  // LongRoPE's factors past the original context (Phi-3)

  static Weights bind(const ModelFile& mf, const HParams& hp);
  // Keeps this rank's rows of every matrix and bias (views into the same file; see model/split.h).
  void take_share(const Split& s);
  // Of a mixture of experts' matrices, one token reads n_expert_used of n_expert.
  int n_expert = 0, n_expert_used = 0;
  uint64_t matrix_bytes() const;     // bytes of the weight matrices read for one token
  uint64_t matrix_elements() const;  // their weights
};

}  // namespace brisk
