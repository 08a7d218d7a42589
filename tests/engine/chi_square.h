// The two-sample chi-square test the sampling suites use: are two equally sized samples of
// tokens drawn from one distribution?
#pragma once

#include <cstdint>
#include <map>
#include <utility>

namespace brisk {

// The statistic over tokens 0..n-1, and the number of cells either sample reached.
inline std::pair<double, int> chi_square(std::map<int32_t, int>& a, std::map<int32_t, int>& b,
                                         int n) {
  double chi2 = 0;
  int cells = 0;
  for (int32_t t = 0; t < n; ++t) {
    const double x = a[t], y = b[t];
    if (x + y == 0) continue;
    chi2 += (x - y) * (x - y) / (x + y);
    ++cells;
  }
  return {chi2, cells};
}

// Critical values at p = 0.0001 by degrees of freedom (cells - 1): a false alarm in 10,000 runs.
constexpr double kChiSquareCritical[] = {0, 15.14, 18.42, 21.11, 23.51, 25.74, 27.86, 29.88, 31.83};

}  // namespace brisk
