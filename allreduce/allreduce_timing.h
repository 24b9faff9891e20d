#pragma once
// Timing one allreduce size with one algorithm, in nccl-tests' BenchTime order: warm up, agree on
// the iteration count, barrier, timed loop, combine the ranks' times. Verification is the
// caller's separate, untimed run (allreduce_verify.h), so checking never pollutes a timing.
#include <functional>
#include <vector>

#include "allreduce/allreduce.h"

namespace dtbench {

struct AllreduceTimingOptions {
  AllreduceOptions allreduce;  // buffer, count, comm, algorithm, average, chunk, wait
  // When set, one iteration instead of allreduce(allreduce), whose comm and wait still serve the
  // bench's own collectives: another library's allreduce (NCCL), or ours with device staging.
  std::function<void()> iteration;
  int warmup_iterations = 5;   // untimed; at least 1 when the iteration count is automatic
  int iterations = 0;          // timed; 0: rank 0 picks them from the warm-up and target_seconds
  double target_seconds = 0.2;
  int min_iterations = 5;  // automatic count: bounds, so p50/p99 mean something and small
  int max_iterations = 1000;  // messages do not run for ever
};

// Valid on rank 0 (the other ranks get their own iteration count and zeros).
struct AllreduceTiming {
  int iterations = 0;
  double mean_seconds = 0;  // the slowest rank's mean time per iteration (nccl-tests' figure)
  double p50_seconds = 0;   // over iterations, each iteration's time being its slowest rank's
  double p99_seconds = 0;
  double min_seconds = 0;
};

AllreduceTiming time_allreduce(const AllreduceTimingOptions& options);

}  // namespace dtbench
