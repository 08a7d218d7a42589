#include "ops/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

namespace brisk {

namespace {

// YaRN's band [low, high] of pair indices: below it pairs rotate fast enough over the original
// context to keep their frequency (extrapolate), above it they are slowed by the factor
// (interpolate), and between the two blend linearly (llama.cpp's ggml_rope_yarn_corr_dims).
std::pair<double, double> yarn_band(int rope_dim, float theta, const RopeScaling& s) {
  auto dim = [&](float rotations) {
    return rope_dim *
           std::log(static_cast<double>(s.original_context) / (rotations * 2 * std::numbers::pi)) /
           (2 * std::log(static_cast<double>(theta)));
  };
  return {std::max(0.0, std::floor(dim(s.beta_fast))),
          std::min(rope_dim - 1.0, std::ceil(dim(s.beta_slow)))};
}

}  // namespace

std::vector<float> rope_inv_freq(int rope_dim, float theta, const RopeScaling& s,
                                 const float* freq_factors) {
  std::vector<float> f(static_cast<size_t>(rope_dim / 2));
  const auto [low, high] = s.kind == RopeScaling::Kind::Yarn ? yarn_band(rope_dim, theta, s)
                                                             : std::pair<double, double>{};
  for (int i = 0; i < rope_dim / 2; ++i) {
    double inv = std::pow(static_cast<double>(theta), -2.0 * i / rope_dim);
    if (freq_factors) inv /= freq_factors[i];
    if (s.kind == RopeScaling::Kind::Yarn) {
      const double ramp = 1 - std::clamp((i - low) / std::max(0.001, high - low), 0.0, 1.0);
      inv = inv / s.factor * (1 - ramp) + inv * ramp;
    } else if (s.kind == RopeScaling::Kind::Linear) {
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

float rope_magnitude(const RopeScaling& s) {
  if (s.kind != RopeScaling::Kind::Yarn || !(s.factor > 1)) return s.attn_factor;
  // llama.cpp multiplies by 1 + 0.1 ln(factor) in the kernel and, for files whose rope is YaRN,
  // first cancels it in the context's attention factor (llama-context.cpp), so what remains is
  // the file's attention factor and, with a log multiplier m, (1 + 0.1 ln f) / (1 + 0.1 m ln f).
  // The same float steps are taken here so the values match its rounding too.
  const float f = 1.0f / (1.0f / s.factor);
  auto mscale = [&](float m) { return 0.1f * m * std::log(f) + 1.0f; };
  float a = s.log_multiplier != 0 ? mscale(1.0f) / mscale(s.log_multiplier) : mscale(1.0f);
  a *= 1.0f / (1.0f + 0.1f * std::log(f));
  a *= s.attn_factor;
  return a * (1.0f + 0.1f * std::log(f));
}

void rope(float* x, int n_heads, int head_dim, int rope_dim, int64_t pos, RopeType type,
          const float* inv_freq, float magnitude) {
  const int half = rope_dim / 2;
  // Angles in double so long contexts keep full float precision in cos/sin.
  float c[512], s[512];
  for (int i = 0; i < half; ++i) {
    const double a = static_cast<double>(pos) * inv_freq[i];
    c[i] = static_cast<float>(std::cos(a));
    s[i] = static_cast<float>(std::sin(a));
  }
  if (magnitude != 1.0f)
    for (int i = 0; i < half; ++i) c[i] *= magnitude, s[i] *= magnitude;
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
