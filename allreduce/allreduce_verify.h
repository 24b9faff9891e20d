#pragma once
// Checking an allreduce's result exactly (nccl-tests' separate, untimed verification run): each
// rank fills its buffer with small integers that depend on its rank and the element index, so
// every partial sum is an integer below 2^24 and exact in float32 whatever the order of the
// additions; the sum of every element then has a closed form to compare against.
#include <cstdint>
#include <span>
#include <string>

namespace dtbench {

// value(rank, i) = (rank + 1) · (1 + i mod period), the period chosen from the world size so that
// the sum over ranks, world(world+1)/2 · period at most, stays below 2^24 (beyond ~5,800 ranks the
// rank factor repeats, for the same reason). The index dependence catches a
// segment delivered to the wrong place; the rank dependence a contribution lost or added twice.
void fill_allreduce_pattern(std::span<float> buffer, int rank, int world);

struct AllreduceMismatch {
  int64_t wrong_count = 0;   // elements that differ from the closed form
  int64_t first_index = -1;  // the first of them, -1 when none
  float got = 0.0f;
  float expected = 0.0f;
  std::string text() const;  // "" when wrong_count is 0
};

// Compares every element against the sum over all ranks of fill_allreduce_pattern's values.
AllreduceMismatch check_allreduce_sum(std::span<const float> buffer, int world);

}  // namespace dtbench
