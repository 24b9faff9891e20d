#pragma once
// Candidates timed against each other in interleaved rounds, so that a slow moment of the machine
// falls on all of them, and the slow ones dropped early: what the convolution tuner
// (conv_tuning.h) runs for each pass of a layer. Apart from the kernels so that what decides a
// choice can be checked on timings made up for it.
#include <cstddef>
#include <functional>
#include <limits>
#include <vector>

#include "core/tuning/quiet_timer.h"

namespace dtbench {

struct TimingRounds {
  std::vector<double> best_ms;  // per candidate: its least undisturbed time (the least of all where none was)
  int disturbed = 0, timed = 0;  // timings that lost their CPU, of all made
};

inline constexpr size_t kNoRule = std::numeric_limits<size_t>::max();

// Times candidate i by `time_one(i)` in rounds until each still timed has two undisturbed
// timings and about `target_ms` of the fastest one's time is spent (2 to 12 rounds). A candidate
// is dropped once its undisturbed best is twice the fastest's after the first round, 1.5 times
// after later ones — never on disturbed timings alone, and the rule's candidate (`rule`, kNoRule
// for none) never: the choice is the rule unless another beats it, so the rule's time must be as
// well measured as the winner's. (Dropped on its first timing, the rule's gemm for ResNet-18's stem
// was left at 4.95 ms, five times its time, on a Zen 3 EPYC running a second test, and a kernel
// 1.3 times slower than it was chosen.)
TimingRounds time_in_rounds(size_t candidates, size_t rule, double target_ms,
                            const std::function<QuietTiming(size_t)>& time_one);

}  // namespace dtbench
