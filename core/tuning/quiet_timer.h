#pragma once
// A wall-clock timing that knows whether it was disturbed: whether the kernel took a CPU from this
// process meanwhile (an involuntary context switch of any of its threads). On a busy machine — two
// tests at once, other ranks, a build — a timing that lost its CPU measures the neighbours rather
// than the code, so a choice between algorithms counts only the undisturbed ones.
#include <sys/resource.h>

#include <chrono>

#include "core/util/clock.h"

namespace dtbench {

struct QuietTiming {
  double ms = 0.0;
  bool disturbed = false;
};

template <typename Work>
QuietTiming time_quietly(Work&& work) {
  rusage before{}, after{};
  ::getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  work();
  const double ms = 1e3 * seconds_since(start);
  ::getrusage(RUSAGE_SELF, &after);
  return {ms, after.ru_nivcsw != before.ru_nivcsw};
}

}  // namespace dtbench
