#include "core/tuning/summing_speed.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <vector>

#include "core/util/error.h"

namespace dtbench {

double measure_summing_s_per_byte() {
  constexpr size_t kFloats = 2 << 20;  // 8 MiB each: beyond the caches, as a gradient bucket is
  std::vector<float> sum(kFloats, 1.0f), part(kFloats, 0.5f);
  double best = std::numeric_limits<double>::infinity();
  for (int run = 0; run < 5; ++run) {
    const auto start = std::chrono::steady_clock::now();
    for (size_t k = 0; k < kFloats; ++k) sum[k] += part[k];
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  if (sum[kFloats / 2] < 1.0f) throw LogicError("summing timing: the sum went wrong");  // keeps the loop alive
  return best / (kFloats * sizeof(float));
}

}  // namespace dtbench
