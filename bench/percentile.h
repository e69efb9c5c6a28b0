// The p-quantile (nearest rank) of a sample, shared by the bench programs.
#pragma once

#include <algorithm>
#include <vector>

namespace stax::bench {

inline double pct(std::vector<double> xs, double p) {
  if (xs.empty()) return 0;
  std::sort(xs.begin(), xs.end());
  size_t k = size_t(p * double(xs.size() - 1) + 0.5);
  return xs[std::min(k, xs.size() - 1)];
}

}  // namespace stax::bench
