#include "launch/predict/order_statistic.h"

#include <algorithm>
#include <cmath>

#include "core/util/error.h"

namespace dtbench {

double expected_max_of(std::vector<double> samples, int n) {
  if (samples.empty()) fail_input("straggler term: no compute samples to draw from");
  if (n < 1) fail_input("straggler term: the largest of {} draws; expected at least 1", n);
  std::sort(samples.begin(), samples.end());
  const double m = static_cast<double>(samples.size());
  double expected = 0, below = 0;  // below: P(max <= x(i-1)) = ((i-1)/m)^n
  for (size_t i = 1; i <= samples.size(); ++i) {
    const double at_most = std::pow(static_cast<double>(i) / m, n);
    expected += samples[i - 1] * (at_most - below);
    below = at_most;
  }
  return expected;
}

}  // namespace dtbench
