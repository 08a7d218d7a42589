#include "quant/quant_mxfp4.h"

#include <algorithm>
#include <cmath>

namespace brisk {

void dequantize_mxfp4(const BlockMXFP4* b, float* y) {
  const float d = mxfp4_half_scale(b->e);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * kMXFP4Values[b->qs[j] & 0xF];
    y[j + 16] = d * kMXFP4Values[b->qs[j] >> 4];
  }
}

namespace {

// The index of the value nearest x under scale d (the first of equals).
uint8_t nearest(float x, float d) {
  int best = 0;
  float err = std::fabs(kMXFP4Values[0] * d - x);
  for (int i = 1; i < 16; ++i) {
    const float e = std::fabs(kMXFP4Values[i] * d - x);
    if (e < err) best = i, err = e;
  }
  return static_cast<uint8_t>(best);
}

}  // namespace

void quantize_mxfp4(const float* x, BlockMXFP4* b, const float*) {
  float amax = 0;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  // Clamped to the byte (ggml's cast wraps past it; only absurd values get there).
  const float e = amax > 0 ? std::floor(std::log2(amax)) - 2 + 127 : 0;
  b->e = static_cast<uint8_t>(std::clamp(std::isfinite(e) ? e : 254.0f, 0.0f, 254.0f));
  const float d = mxfp4_half_scale(b->e);
  for (int j = 0; j < 16; ++j)
    b->qs[j] = static_cast<uint8_t>(nearest(x[j], d) | nearest(x[j + 16], d) << 4);
}

}  // namespace brisk
