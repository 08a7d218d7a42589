// Rotary position embedding. "Norm" rotates interleaved pairs (x[2i], x[2i+1]) as Meta's Llama and
// GGUF's llama layout do; "Neox" rotates (x[i], x[i+d/2]) as Qwen and Hugging Face's layout do.
#pragma once

#include <cstdint>
#include <vector>

namespace brisk {

enum class RopeType { Norm, Neox };

struct RopeScaling {
  enum class Kind { None, Linear, Llama3, Yarn } kind = Kind::None;
  float factor = 1.0f;
  float low_freq_factor = 1.0f, high_freq_factor = 4.0f;  // Llama 3
  int64_t original_context = 8192;                        // Llama 3, YaRN
  // YaRN: the band of dimensions blended between interpolation and extrapolation (beta_fast and
  // beta_slow rotations over the original context), the attention factor the file gives, and
  // DeepSeek's log multiplier of the magnitude correction (0: none).
  float beta_fast = 32.0f, beta_slow = 1.0f, attn_factor = 1.0f, log_multiplier = 0.0f;
};

// Inverse frequency of each rotated pair: theta^(-2i/rope_dim), divided by any scaling factors.
// freq_factors (optional, rope_dim/2 entries) is GGUF's rope_freqs tensor.
std::vector<float> rope_inv_freq(int rope_dim, float theta, const RopeScaling& scaling,
                                 const float* freq_factors = nullptr);
// What the rotated values are multiplied by: YaRN's magnitude correction, as llama.cpp computes
// it (1 for every other kind).
float rope_magnitude(const RopeScaling& scaling);

// Rotates the first rope_dim elements of each of n_heads heads (stride head_dim) at position pos,
// each rotated pair scaled by `magnitude`.
void rope(float* x, int n_heads, int head_dim, int rope_dim, int64_t pos, RopeType type,
          const float* inv_freq, float magnitude = 1.0f);

}  // namespace brisk
