// Llama 3.1's rope scaling as GGUF files carry it: llama.cpp's converter writes no scaling keys but
// a `rope_freqs.weight` tensor, one factor per rotated pair of dimensions by which that pair's
// frequency is divided. Every GGUF reader understands the tensor; few know a "llama3" key.
#pragma once

#include <cstdint>
#include <vector>

namespace brisk {

struct Llama3Rope {
  double factor = 8;
  double low_freq_factor = 1;
  double high_freq_factor = 4;
  double original_context = 8192;
};

// rope_dim / 2 factors: 1 for short wavelengths, `factor` for long ones, blended between.
std::vector<float> llama3_rope_factors(int64_t rope_dim, double theta, const Llama3Rope& s);

}  // namespace brisk
