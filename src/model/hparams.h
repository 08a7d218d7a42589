// Hyper-parameters of a Llama-family model, read from GGUF-style metadata and checked for sense.
#pragma once

#include <cstdint>
#include <string>

#include "core/metadata.h"
#include "ops/rope.h"

namespace brisk {

struct HParams {
  std::string arch;  // llama, qwen2, qwen3
  int64_t n_vocab = 0, n_embd = 0, n_layer = 0, n_ff = 0;
  int n_head = 0, n_head_kv = 0, head_dim = 0, rope_dim = 0;
  int64_t n_ctx_train = 0;
  float rms_eps = 1e-5f;
  float rope_theta = 10000.0f;
  RopeType rope_type = RopeType::Norm;
  RopeScaling rope_scaling;
  bool qkv_bias = false;  // Qwen2
  bool qk_norm = false;   // Qwen3
  bool tied_output = false;

  int64_t q_dim() const { return static_cast<int64_t>(n_head) * head_dim; }
  int64_t kv_dim() const { return static_cast<int64_t>(n_head_kv) * head_dim; }

  // Throws an Error naming the file and the offending key.
  static HParams from_model(const ModelFile& mf);
};

// The architectures the forward pass implements.
bool arch_supported(const std::string& arch);

}  // namespace brisk
