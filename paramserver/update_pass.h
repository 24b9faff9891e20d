#pragma once
// One update of a shard in a single pass over memory, block by block: the gradients averaged, the
// average checked, the optimizer's step taken from the current values INTO ANOTHER BUFFER (the
// next version's snapshot), the new values checked. Done as separate whole-shard passes (sum,
// check, step in place, check, copy to the snapshot) a 64 MiB shard read and wrote about 640 MB;
// in one pass it reads the gradients and the old values and writes the new ones (256 MB for two
// workers), and a large shard is cut into ranges that threads update at once.
//
// Nothing is written to `values`: a step found not finite leaves them as they were (the caller
// puts the optimizer's state back and drops `next`).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/optim/optimizer.h"
#include "paramserver/for_each_shard.h"

namespace dtbench {

// How the gradients become the one the optimizer steps with, element by element:
//   sum_from_zero (sync):  a = 0.0f; a += g for each gradient in order; then a *= scale if scaled
//   otherwise (async):     a = g (the only gradient); then a *= scale if scaled
// exactly as the updater computed it in whole-shard passes, so results stay bit for bit.
struct GradientAverage {
  std::vector<const float*> gradients;  // each float_count floats, in worker order
  bool sum_from_zero = true;
  bool scaled = false;
  float scale = 1.0f;
};

// Floats per thread below which a range is not worth a thread of its own.
constexpr int64_t kFloatsPerUpdateThread = 1 << 20;

// Threads to update a shard of `float_count` floats with: 1 for a small shard, else up to the
// machine's cores (at most 4: the pass is bound by memory, not arithmetic).
int update_thread_count(int64_t float_count);

struct UpdatePassResult {
  // "" — or, when the average, the new values or the optimizer's new state are not finite, what
  // was not (the first such float of the shard).
  std::string problem;
  // The pass's share spent averaging (each range's time in it, over the ranges): the pass
  // interleaves averaging and stepping block by block, so this is what the separate passes' split
  // would have been.
  double averaging_seconds = 0.0;
};

// `optimizer` must have begun its step (begin_step()). Writes the step from `values` into `next`
// (both float_count long); after a problem `next` and the optimizer's state are garbage (the
// caller puts the state back). `threads` (may be null: this thread alone) run the ranges.
UpdatePassResult run_update_pass(Optimizer& optimizer, const GradientAverage& average, std::span<const float> values,
                                 std::span<float> next, ShardThreads* threads);

}  // namespace dtbench
