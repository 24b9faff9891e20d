#pragma once
// A wall-clock timing that knows whether it was disturbed: whether this process's threads waited
// for a CPU during it (runnable, but another task on their core) for more than a small share of
// it. On a busy machine — two tests at once, other ranks, a build — such a timing measures the
// neighbours rather than the code, so a choice between algorithms counts only the undisturbed ones.
//
// The wait is the kernel's own account of each thread's time on a run queue
// (/proc/self/task/*/schedstat). Counting any involuntary context switch instead, as this timer
// once did, called half the timings of two threads on an idle 2-core machine disturbed: a kernel
// thread waking on one of the cores (kdamond, ksoftirqd) preempts a thread for microseconds, and
// the tuner then found the machine too busy to measure at most runs. The wait also counts a
// thread of this process kept from a core by another of its own (a spinning BLAS worker). Where the
// kernel keeps no schedstat, a timing with an involuntary switch counts as disturbed, as before.
#include <chrono>

#include "core/util/clock.h"

namespace dtbench {

struct QuietTiming {
  double ms = 0.0;
  bool disturbed = false;
};

// The threads' waits for a CPU may add up to this share of the timing's wall time (a kernel
// thread's wake-ups: 0.1 % at the median, 1 % at the 90th percentile of 20 ms timings of two
// threads on an idle 2-core AMD EPYC) before it counts as disturbed; with another process
// running beside it on one of the cores, the median was 51 %.
inline constexpr double kMostWaitShare = 0.02;

// What the process's threads have lost to other tasks so far: their summed run-queue wait where
// the kernel keeps it, else the count of involuntary context switches.
struct CpuLoss {
  bool from_wait = false;
  double waited_ns = 0.0;
  long involuntary_switches = 0;
};
CpuLoss cpu_loss_so_far();

// Whether the loss between `before` and `after`, over `wall_ns`, makes a timing disturbed.
bool lost_the_cpu(const CpuLoss& before, const CpuLoss& after, double wall_ns);

template <typename Work>
QuietTiming time_quietly(Work&& work) {
  const CpuLoss before = cpu_loss_so_far();
  const auto start = std::chrono::steady_clock::now();
  work();
  const double seconds = seconds_since(start);
  const CpuLoss after = cpu_loss_so_far();
  return {1e3 * seconds, lost_the_cpu(before, after, 1e9 * seconds)};
}

}  // namespace dtbench
