// A model's hyper-parameters, read from GGUF-style metadata and checked for sense: the ones every
// architecture shares here, its own through its Architecture (model/architecture.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/metadata.h"
#include "ops/activation.h"
#include "ops/moe.h"
#include "ops/rope.h"

namespace brisk {

class Architecture;

struct HParams {
  std::string arch;                            // general.architecture as the file names it
  const Architecture* architecture = nullptr;  // the one that reads it
  int64_t n_vocab = 0, n_embd = 0, n_layer = 0, n_ff = 0;
  int n_head = 0, n_head_kv = 0, head_dim = 0, rope_dim = 0;
  int64_t n_ctx_train = 0;
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  RopeType rope_type = RopeType::Norm;
  RopeScaling rope_scaling;
  bool qkv_bias = false;  // biases on q, k and v (Qwen 2)
  bool qk_norm = false;   // an RMS norm on each query and key head (Qwen 3)
  bool tied_output = false;
  // Sliding-window attention: layers whose windowed[l] is set attend to the last `window`
  // positions only (their own included); empty: every layer attends to all.
  int64_t window = 0;
  std::vector<uint8_t> windowed;
  // Rotary base of the windowed layers where it differs (Gemma 3's local layers: 10000, without
  // the global layers' scaling); 0: they rotate as the others.
  float rope_theta_windowed = 0;
  // The query-key product's scale (0: 1/sqrt(head_dim)), and soft-capping (cap tanh(x / cap), 0:
  // none) of the attention scores and of the final logits (Gemma 2).
  float attn_scale = 0, attn_softcap = 0, final_softcap = 0;
  // The token embeddings' scale (Gemma: sqrt(n_embd)).
  float embd_scale = 1;
  // The feed-forward's (and each expert's) gated unit between gate/up and down.
  GatedUnit glu;
  // Mixture of experts (experts.n_expert > 0): the router, and each expert's FFN width.
  ExpertRouting experts;
  int64_t n_ff_exp = 0;

  int64_t q_dim() const { return static_cast<int64_t>(n_head) * head_dim; }
  int64_t kv_dim() const { return static_cast<int64_t>(n_head_kv) * head_dim; }

  bool has_experts() const { return experts.n_expert > 0; }
  float attention_scale() const {
    return attn_scale > 0 ? attn_scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
  }
  bool is_windowed(int layer) const {
    return !windowed.empty() && windowed[static_cast<size_t>(layer)];
  }
  // The first position a token at `pos` attends to in layer l.
  int64_t first_key(int layer, int64_t pos) const {
    if (!is_windowed(layer)) return 0;
    return pos + 1 > window ? pos + 1 - window : 0;
  }

  // Throws an Error naming the file and the offending key.
  static HParams from_model(const ModelFile& mf);
};

// For an architecture's read(): the experts' count, how many each token uses and their FFN
// width ({arch}.expert_count, expert_used_count, and expert_feed_forward_length, else
// `default_width`), checked, with the architecture's gating; expert_weights_scale where the file
// gives one.
void read_experts(const ModelFile& mf, HParams& h, ExpertGating gating, bool normalize,
                  int64_t default_width);
// For an architecture's read(): {arch}.attention.sliding_window, on the layers l with
// l % period < period - 1 ({arch}.attention.sliding_window_pattern, else `default_period`; 2
// slides every other layer from the first, as gpt-oss does; 0 slides all).
// default_window: the window where the file gives none (0: then no layer slides; -1: the key is
// required).
void read_sliding_window(const ModelFile& mf, HParams& h, int64_t default_period,
                         int64_t default_window = -1);

}  // namespace brisk
