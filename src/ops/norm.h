#pragma once

#include <cstdint>

namespace brisk {

// out = x / sqrt(mean(x²) + eps) * w, for one row of n elements (out may alias x).
void rmsnorm(const float* x, const float* w, float* out, int64_t n, float eps);

}  // namespace brisk
