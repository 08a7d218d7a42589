#include "quant/quant_iq4.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "core/dtype.h"

namespace brisk {
namespace {

float h2f(uint16_t h) {
  return f16_to_f32(h);
}

float weight_at(const float* w, int i) {
  return w ? w[i] : 1.0f;
}

// The index of the table value nearest v (the lower one on a tie).
int nearest_index(float v) {
  const int8_t* hi = std::lower_bound(std::begin(kIQ4Values), std::end(kIQ4Values), v,
                                      [](int8_t a, float b) { return static_cast<float>(a) < b; });
  if (hi == std::begin(kIQ4Values)) return 0;
  if (hi == std::end(kIQ4Values)) return 15;
  const int i = static_cast<int>(hi - std::begin(kIQ4Values));
  return v - static_cast<float>(kIQ4Values[i - 1]) <= static_cast<float>(kIQ4Values[i]) - v ? i - 1
                                                                                            : i;
}

// Weighted squared error of x ≈ s * table[nearest(x / s)].
double table_error(const float* x, const float* w, int n, float s) {
  double err = 0;
  for (int i = 0; i < n; ++i) {
    const float e = x[i] - s * static_cast<float>(kIQ4Values[nearest_index(x[i] / s)]);
    err += weight_at(w, i) * e * e;
  }
  return err;
}

// The scale s of x ≈ s * table[q] with the least weighted squared error over a grid of starting
// scales, each also refitted by least squares for the indices it chose; 0 for an all-zero group.
// The value of largest magnitude starts at the table's end of larger magnitude (-127), either sign.
float fit_table_scale(const float* x, const float* w, int n) {
  float amax = 0, vmax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), vmax = x[i];
  if (amax == 0) return 0;
  const float base = vmax / static_cast<float>(kIQ4Values[0]);
  float best_s = base;
  double best_err = INFINITY;
  for (int k = -10; k <= 10; ++k) {
    const float s0 = base * (1.0f + 0.015f * static_cast<float>(k));
    double sxq = 0, sqq = 0;
    for (int i = 0; i < n; ++i) {
      const float q = kIQ4Values[nearest_index(x[i] / s0)];
      sxq += weight_at(w, i) * x[i] * q;
      sqq += weight_at(w, i) * q * q;
    }
    for (float s : {s0, sqq > 0 ? static_cast<float>(sxq / sqq) : s0}) {
      if (s == 0) continue;
      const double err = table_error(x, w, n, s);
      if (err < best_err) best_err = err, best_s = s;
    }
  }
  return best_s;
}

// The 32 values of a group as table indices under scale s, packed as IQ4_NL's qs.
void pack_group(const float* x, float s, uint8_t* qs) {
  const float is = s != 0 ? 1.0f / s : 0.0f;
  for (int j = 0; j < 16; ++j)
    qs[j] = static_cast<uint8_t>(nearest_index(x[j] * is) | nearest_index(x[j + 16] * is) << 4);
}

void unpack_group(const uint8_t* qs, float s, float* y) {
  for (int j = 0; j < 16; ++j) {
    y[j] = s * static_cast<float>(kIQ4Values[qs[j] & 0xF]);
    y[j + 16] = s * static_cast<float>(kIQ4Values[qs[j] >> 4]);
  }
}

}  // namespace

void dequantize_iq4_nl(const BlockIQ4_NL* b, float* y) {
  unpack_group(b->qs, h2f(b->d), y);
}

void dequantize_iq4_xs(const BlockIQ4_XS* b, float* y) {
  const float d = h2f(b->d);
  for (int g = 0; g < 8; ++g)
    unpack_group(b->qs + 16 * g, d * static_cast<float>(iq4xs_scale(*b, g)), y + 32 * g);
}

void quantize_iq4_nl(const float* x, BlockIQ4_NL* b, const float* w) {
  const float s = h2f(f32_to_f16(fit_table_scale(x, w, 32)));
  b->d = f32_to_f16(s);
  pack_group(x, s, b->qs);
}

void quantize_iq4_xs(const float* x, BlockIQ4_XS* b, const float* w) {
  float s[8], amax = 0, vmax = 0;
  for (int g = 0; g < 8; ++g) {
    s[g] = fit_table_scale(x + 32 * g, w ? w + 32 * g : nullptr, 32);
    if (std::fabs(s[g]) > amax) amax = std::fabs(s[g]), vmax = s[g];
  }
  // The group scale of largest magnitude maps to -32, the end of the 6-bit range with the larger
  // magnitude; each group then takes the stored step nearest its own scale and is re-quantized
  // under the scale actually stored.
  const float d = h2f(f32_to_f16(amax > 0 ? vmax / -32.0f : 0.0f));
  b->d = f32_to_f16(d);
  b->scales_h = 0;
  std::fill(std::begin(b->scales_l), std::end(b->scales_l), 0);
  for (int g = 0; g < 8; ++g) {
    const int sc = d != 0 ? std::clamp(static_cast<int>(std::lrintf(s[g] / d)), -32, 31) : 0;
    const int l = sc + 32;
    b->scales_l[g / 2] |= static_cast<uint8_t>((l & 0xF) << (4 * (g % 2)));
    b->scales_h |= static_cast<uint16_t>((l >> 4) << (2 * g));
    pack_group(x + 32 * g, d * static_cast<float>(sc), b->qs + 16 * g);
  }
}

}  // namespace brisk
