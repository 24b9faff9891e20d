#include "allreduce/allreduce_verify.h"

#include <algorithm>

#include <fmt/format.h>

namespace dtbench {

namespace {

// The largest period whose sum over `world` ranks stays below 2^24, where float32 stops holding
// every integer; 251 (a prime, so segment boundaries rarely line up with it) at most.
int64_t pattern_period(int world) {
  const int64_t rank_weights = static_cast<int64_t>(world) * (world + 1) / 2;  // Σ (rank + 1)
  return std::clamp<int64_t>((int64_t{1} << 24) / rank_weights, 1, 251);
}

}  // namespace

void fill_allreduce_pattern(std::span<float> buffer, int rank, int world) {
  const int64_t period = pattern_period(world);
  for (size_t i = 0; i < buffer.size(); ++i) {
    buffer[i] = static_cast<float>((rank + 1) * (1 + static_cast<int64_t>(i) % period));
  }
}

AllreduceMismatch check_allreduce_sum(std::span<const float> buffer, int world) {
  const int64_t period = pattern_period(world);
  const int64_t rank_weights = static_cast<int64_t>(world) * (world + 1) / 2;
  AllreduceMismatch result;
  for (size_t i = 0; i < buffer.size(); ++i) {
    const float expected = static_cast<float>(rank_weights * (1 + static_cast<int64_t>(i) % period));
    if (buffer[i] == expected) continue;
    if (result.wrong_count++ == 0) {
      result.first_index = static_cast<int64_t>(i);
      result.got = buffer[i];
      result.expected = expected;
    }
  }
  return result;
}

std::string AllreduceMismatch::text() const {
  if (wrong_count == 0) return {};
  return fmt::format("{} wrong elements; the first at index {}: got {}, expected {}", wrong_count, first_index, got,
                     expected);
}

}  // namespace dtbench
