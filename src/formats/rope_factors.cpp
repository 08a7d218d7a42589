#include "formats/rope_factors.h"

#include <cmath>
#include <numbers>

namespace brisk {

std::vector<float> llama3_rope_factors(int64_t rope_dim, double theta, const Llama3Rope& s) {
  const double low_wavelen = s.original_context / s.low_freq_factor;
  const double high_wavelen = s.original_context / s.high_freq_factor;
  std::vector<float> f(static_cast<size_t>(rope_dim / 2));
  for (int64_t i = 0; i < rope_dim / 2; ++i) {
    const double freq =
        std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(rope_dim));
    const double wavelen = 2 * std::numbers::pi / freq;
    double k = 1;
    if (wavelen > low_wavelen) {
      k = s.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (s.original_context / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
      k = 1 / ((1 - smooth) / s.factor + smooth);
    }
    f[static_cast<size_t>(i)] = static_cast<float>(k);
  }
  return f;
}

}  // namespace brisk
