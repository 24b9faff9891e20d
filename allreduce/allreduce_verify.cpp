#include "allreduce/allreduce_verify.h"

#include <algorithm>

#include <fmt/format.h>

namespace dtbench {

namespace {

constexpr int64_t kExactLimit = int64_t{1} << 24;  // float32 holds every integer up to here

// Rank weights are rank mod K + 1: K is the world size unless the weights' sum would pass the
// limit (thousands of ranks), then smaller, so the sum stays exact at any world size.
int64_t weight_period(int world) { return std::clamp<int64_t>(2 * kExactLimit / world - 1, 1, world); }

int64_t weight_sum(int world) {  // Σ over ranks of (rank mod K + 1)
  const int64_t k = weight_period(world), full = world / k, rest = world % k;
  return full * k * (k + 1) / 2 + rest * (rest + 1) / 2;
}

// The index period: as long as the sum allows, 251 at most (a prime, so segment boundaries rarely
// line up with it).
int64_t index_period(int world) { return std::clamp<int64_t>(kExactLimit / weight_sum(world), 1, 251); }

}  // namespace

void fill_allreduce_pattern(std::span<float> buffer, int rank, int world) {
  const int64_t weight = rank % weight_period(world) + 1, period = index_period(world);
  for (size_t i = 0; i < buffer.size(); ++i) {
    buffer[i] = static_cast<float>(weight * (1 + static_cast<int64_t>(i) % period));
  }
}

AllreduceMismatch check_allreduce_sum(std::span<const float> buffer, int world) {
  const int64_t period = index_period(world), rank_weights = weight_sum(world);
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
