#include "paramserver/update_pass.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "core/util/clock.h"
#include "paramserver/finite_check.h"

namespace dtbench {

namespace {

// Floats per block: the block's average and new values stay in the L1 / L2 cache while the block
// is checked and stepped.
constexpr int64_t kBlock = 4096;

using Clock = std::chrono::steady_clock;

// What one range found: the first float whose average, and the first whose new value, is not
// finite (-1: none). An average that is not finite outranks a value, as when the checks were
// whole-shard passes (the average was checked before any step).
struct RangeProblems {
  int64_t average_at = -1;
  float average_value = 0.0f;
  int64_t value_at = -1;
  double averaging_seconds = 0.0;
};

void average_block(const GradientAverage& average, int64_t begin, int64_t count, float* out) {
  if (average.sum_from_zero) {
    std::fill(out, out + count, 0.0f);
    for (const float* gradient : average.gradients) {
      const float* g = gradient + begin;
      for (int64_t i = 0; i < count; ++i) out[i] += g[i];
    }
  } else {
    std::memcpy(out, average.gradients.front() + begin, static_cast<size_t>(count) * sizeof(float));
  }
  if (average.scaled) {
    for (int64_t i = 0; i < count; ++i) out[i] *= average.scale;
  }
}

// Blocks [begin, end) in order. Once a value is found not finite nothing more is stepped, but
// the averages are still checked: one that is not finite further on is the problem to report.
RangeProblems update_range(Optimizer& optimizer, const GradientAverage& average, std::span<const float> values,
                           std::span<float> next, int64_t begin, int64_t end) {
  RangeProblems found;
  std::array<float, kBlock> block;  // this block's average
  for (int64_t start = begin; start < end; start += kBlock) {
    const int64_t count = std::min(kBlock, end - start);
    const auto averaging = Clock::now();
    average_block(average, start, count, block.data());
    found.averaging_seconds += seconds_since(averaging);
    if (const int64_t at = first_non_finite({block.data(), static_cast<size_t>(count)}); at >= 0) {
      found.average_at = start + at;
      found.average_value = block[static_cast<size_t>(at)];
      return found;
    }
    if (found.value_at >= 0) continue;
    float* out = next.data() + start;
    std::memcpy(out, values.data() + start, static_cast<size_t>(count) * sizeof(float));
    optimizer.step_part(start, {out, static_cast<size_t>(count)}, {block.data(), static_cast<size_t>(count)});
    if (const int64_t at = first_non_finite({out, static_cast<size_t>(count)}); at >= 0) found.value_at = start + at;
  }
  return found;
}

}  // namespace

int update_thread_count(int64_t float_count) {
  const auto cores = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::clamp<int64_t>(float_count / kFloatsPerUpdateThread, 1, std::min<int64_t>(cores, 4)));
}

namespace {

std::string first_problem(const std::vector<RangeProblems>& found, const Optimizer& optimizer) {
  // Ranges are in shard order, so the first range with a problem has the shard's first.
  for (const RangeProblems& problems : found) {
    if (problems.average_at >= 0) {
      return fmt::format("is not finite (float {} of the shard: {})", problems.average_at, problems.average_value);
    }
  }
  for (const RangeProblems& problems : found) {
    if (problems.value_at >= 0) return fmt::format("would make value {} of the shard not finite", problems.value_at);
  }
  if (const int64_t at = first_non_finite(optimizer.state()); at >= 0) {
    return fmt::format("would make optimizer state {} of the shard not finite", at);
  }
  return "";
}

}  // namespace

UpdatePassResult run_update_pass(Optimizer& optimizer, const GradientAverage& average, std::span<const float> values,
                                 std::span<float> next, ShardThreads* threads) {
  const auto float_count = static_cast<int64_t>(values.size());
  const int ranges = threads != nullptr ? threads->size() : 1;
  // Ranges of whole blocks, so each range's blocks are the blocks of a single-threaded pass.
  const int64_t blocks = (float_count + kBlock - 1) / kBlock;
  const int64_t blocks_per_range = (blocks + ranges - 1) / ranges;
  const auto range = [&](int r) {
    const int64_t begin = std::min(float_count, r * blocks_per_range * kBlock);
    const int64_t end = std::min(float_count, (r + 1) * blocks_per_range * kBlock);
    return update_range(optimizer, average, values, next, begin, end);
  };
  const std::vector<RangeProblems> found = threads != nullptr ? threads->run(range) : std::vector{range(0)};
  UpdatePassResult result{.problem = first_problem(found, optimizer)};
  for (const RangeProblems& problems : found) result.averaging_seconds += problems.averaging_seconds / ranges;
  return result;
}

}  // namespace dtbench
