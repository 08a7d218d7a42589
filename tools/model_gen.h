// Random-weight Llama-family models in the shapes of real ones, written as GGUF. Benchmarks use
// them for speed on realistic shapes; tests use small ones to compare the forward pass against the
// reference on many configurations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace brisk::tools {

struct GenConfig {
  std::string name = "random";
  std::string arch = "llama";  // llama, qwen2, qwen3, qwen3moe, gpt-oss, phi3, gemma2, gemma3
  int64_t n_vocab = 512, n_embd = 64, n_layer = 2, n_ff = 172, n_ctx = 2048;
  int n_head = 4, n_head_kv = 4, head_dim = 0;  // head_dim 0: n_embd / n_head
  bool qkv_bias = false, qk_norm = false, tied = false;
  // A mixture of experts in each FFN's place (n_expert > 0): n_expert_used per token, each
  // n_ff_exp wide.
  int n_expert = 0, n_expert_used = 0;
  int64_t n_ff_exp = 0;
  bool expert_bias = false;  // biases on the router and each expert's gate, up and down
  // gpt-oss's attention: a bias on the output projection, a sink logit per head, a sliding window
  // (0: none) on every other layer; its FFN norm is named post_attention_norm.
  bool out_bias = false, sinks = false;
  int64_t window = 0;
  int64_t window_period = 0;  // written as attention.sliding_window_pattern (0: not written)
  std::string ffn_norm = "ffn_norm";
  // Phi-3: q/k/v in one attn_qkv matrix, gate and up in one ffn_up of 2 x n_ff rows, and
  // LongRoPE's short and long factor tensors (with rope_original_ctx and its attention factor).
  bool fused_qkv = false, fused_gate_up = false, long_rope = false;
  // Gemma: post-attention and post-feed-forward norms, soft-capping written as the file's keys
  // (0: none written), and embeddings drawn small (llama.cpp scales them by sqrt(n_embd)).
  bool post_norms = false;
  float attn_softcap = 0, final_softcap = 0;
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  std::string rope_scaling;  // "", "linear", "llama3" or "yarn"
  float rope_factor = 1.0f;
  int64_t rope_original_ctx = 0;  // YaRN's original context
  DType type = DType::F16;        // matrices; norms are F32 as in real files
  DType embd_type = DType::F16;
  std::optional<DType> expert_type;  // the experts' stacked matrices (none: `type`)
  uint64_t seed = 1;
};

// Shapes of real models: tinyllama-1.1b, llama-3.2-1b, qwen2.5-0.5b, qwen3-0.6b, smollm-135m,
// stories260k, qwen3-30b-a3b, mixtral-8x7b, gpt-oss-20b, phi-3.5-mini, gemma-2-2b, gemma-3-4b.
// Throws Error for an unknown name.
GenConfig preset(const std::string& name);
std::vector<std::string> preset_names();

// Writes the model (with a synthetic SentencePiece vocabulary of n_vocab tokens) to path.
void write_random_model(const GenConfig& c, const std::string& path);

}  // namespace brisk::tools
