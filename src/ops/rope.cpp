#include "ops/rope.h"

#include <cmath>
#include <numbers>

namespace brisk {

std::vector<float> rope_inv_freq(int rope_dim, float theta, const RopeScaling& s,
                                 const float* freq_factors) {
  std::vector<float> f(static_cast<size_t>(rope_dim / 2));
  for (int i = 0; i < rope_dim / 2; ++i) {
    double inv = std::pow(static_cast<double>(theta), -2.0 * i / rope_dim);
    if (freq_factors) inv /= freq_factors[i];
    if (s.kind == RopeScaling::Kind::Linear) {
      inv /= s.factor;
    } else if (s.kind == RopeScaling::Kind::Llama3) {
      // Llama 3.1: long wavelengths are slowed by `factor`, short ones kept, the band between
      // blended.
      const double low_wavelen = s.original_context / s.low_freq_factor;
      const double high_wavelen = s.original_context / s.high_freq_factor;
      const double wavelen = 2 * std::numbers::pi / inv;
      if (wavelen > low_wavelen) {
        inv /= s.factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth = (s.original_context / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        inv = (1 - smooth) * inv / s.factor + smooth * inv;
      }
    }
    f[static_cast<size_t>(i)] = static_cast<float>(inv);
  }
  return f;
}

void rope(float* x, int n_heads, int head_dim, int rope_dim, int64_t pos, RopeType type,
          const float* inv_freq) {
  const int half = rope_dim / 2;
  // Angles in double so long contexts keep full float precision in cos/sin.
  float c[512], s[512];
  for (int i = 0; i < half; ++i) {
    const double a = static_cast<double>(pos) * inv_freq[i];
    c[i] = static_cast<float>(std::cos(a));
    s[i] = static_cast<float>(std::sin(a));
  }
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      const int a = type == RopeType::Norm ? 2 * i : i;
      const int b = type == RopeType::Norm ? 2 * i + 1 : i + half;
      const float v0 = v[a], v1 = v[b];
      v[a] = v0 * c[i] - v1 * s[i];
      v[b] = v0 * s[i] + v1 * c[i];
    }
  }
}

}  // namespace brisk
