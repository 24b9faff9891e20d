#pragma once
// A step's communication piece by piece, over an epoch: for each piece (an allreduce bucket; a
// parameter server's push, wait and pull) when, on average, the transport had it, began it and
// ended it, in seconds from the step's backward start. This is what a cost model's account of
// overlap is checked against: a bucket ready late is backward's shape, one that started late
// waited for the one before it, one that took long is the link's or the CPU's.
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/profile/comm_span.h"

namespace dtbench {

struct CommTiming {
  std::string what;  // "allreduce bucket", "push", ...
  int index = 0;     // the bucket; -1 for a piece without one
  int64_t bytes = 0;
  int64_t steps = 0;  // steps the means are over
  double ready_s = 0.0, start_s = 0.0, end_s = 0.0;  // means, from backward's start
};

class CommTimings {
 public:
  // One step's pieces, timed against that step's backward start.
  void record(std::chrono::steady_clock::time_point backward_start, std::span<const CommSpan> spans);
  // Means per piece, in the order each first appeared; sums until then.
  std::vector<CommTiming> means() const;
  void clear() { pieces_.clear(); }

 private:
  std::vector<CommTiming> pieces_;  // sums
};

}  // namespace dtbench
