#pragma once
// What the convolution kernels share about per-thread scratch: buffers grown only (so no step
// allocates once the first has run), and the filter gradient summed from the threads' shares.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace dtbench {

// `buffer` holding at least `count` floats; its contents are whatever it held.
inline float* sized(std::vector<float>& buffer, int64_t count) {
  if (static_cast<int64_t>(buffer.size()) < count) buffer.resize(static_cast<size_t>(count));
  return buffer.data();
}

// `buffer` holding at least `count` floats, the first `count` zero: a thread's share of a gradient.
inline float* zeroed(std::vector<float>& buffer, int64_t count) {
  float* values = sized(buffer, count);
  std::fill_n(values, count, 0.0f);
  return values;
}

// dweight = the sum of the threads' shares of the filter gradient, in thread order (threads that
// had no samples left theirs null; dweight is left as it is when all did).
inline void add_weight_shares(float* dweight, const std::vector<const float*>& shares, int64_t count) {
  bool written = false;
  for (const float* share : shares) {
    if (share == nullptr) continue;
    if (!written) {
      std::copy_n(share, count, dweight);
    } else {
      for (int64_t i = 0; i < count; ++i) dweight[i] += share[i];
    }
    written = true;
  }
}

}  // namespace dtbench
