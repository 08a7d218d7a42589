#include "ops/norm.h"

#include <cmath>

namespace brisk {

void rmsnorm(const float* x, const float* w, float* out, int64_t n, float eps) {
  // Eight partial sums in a fixed order: vectorizable, and the same result for any caller.
  float part[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) part[l] += x[i + l] * x[i + l];
  for (; i < n; ++i) part[0] += x[i] * x[i];
  const float ss =
      ((part[0] + part[4]) + (part[2] + part[6])) + ((part[1] + part[5]) + (part[3] + part[7]));
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int64_t j = 0; j < n; ++j) out[j] = x[j] * scale * w[j];
}

}  // namespace brisk
