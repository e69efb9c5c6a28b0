// The median of timing samples, shared by the experiments, the benchmark
// commands of the CLI and the programs of bench/. Header-only, so that a
// bench program needs no library for it.
#pragma once

#include <algorithm>
#include <vector>

namespace stax::experiments {

/// The middle sample, or the mean of the two middle ones for an even count;
/// 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace stax::experiments
