#pragma once
// Runs of known parameters for the tests of `predict --fit` (launch/predict/run_fit.h).
#include <cmath>
#include <string>

#include "launch/predict/fit_runs.h"

namespace dtbench {

// Synthetic runs with known parameters: each rank's compute is 10 ms or 30 ms with equal chance
// (so the slowest of n is 30 ms unless all n drew 10 ms: 30 - 20 / 2^n ms), one bucket of S bytes
// reduced after backward in 2(N-1)(alpha + S/N/beta), plus delays of o0 + o1 N after it (2 ms at 2
// workers, 2.5 at 3: the fit takes their mean, 2.25 ms, at every N).
inline constexpr double kFast = 0.010, kSlow = 0.030, kAlpha = 200e-6, kBeta = 50e6, kO0 = 0.001, kO1 = 0.0005;
inline constexpr int64_t kBytes = 1 << 20;
inline constexpr double kDelayMean = kO0 + 2.5 * kO1;  // the delays' mean over runs at 2 and 3 workers

inline double slowest_of(int n) { return kSlow - (kSlow - kFast) / std::pow(2.0, n); }

inline FitRun synthetic_run(const std::string& transport, int n) {
  FitRun run;
  run.measured.dir = "/runs/" + transport + "-" + std::to_string(n);
  run.measured.model = "lenet5";
  run.measured.transport = transport;
  run.measured.link = "1gbit";
  run.measured.workers = n;
  run.measured.workload = {.compute = {.forward_s = 0.005, .backward_s = 0.010, .update_s = 0.005},
                           .bucket_bytes = {kBytes}, .bucket_ready = {1.0}, .overlap = false,
                           .gradient_bytes = kBytes};
  for (int rank = 0; rank < n; ++rank) run.compute_samples.insert(run.compute_samples.end(), {kFast, kSlow});
  run.mean_compute_s = (kFast + kSlow) / 2;
  return run;
}

inline FitRun allreduce_run(int n) {
  FitRun run = synthetic_run("ring", n);
  const double transfer = 2 * (n - 1) * (kAlpha + static_cast<double>(kBytes) / n / kBeta);
  run.last_bucket_wait_s = 0.004;  // the bucket's span holds the rank's wait for the last to arrive
  run.pieces = {{.what = "allreduce bucket", .index = 0, .bytes = kBytes, .ready_s = 0.010, .start_s = 0.010,
                 .end_s = 0.010 + transfer + run.last_bucket_wait_s}};
  run.step_s = slowest_of(n) + transfer + kO0 + kO1 * n;
  return run;
}

// Parameter servers: push + pull t0 + t1 (N-1)/N, the rest of the round r0 + r1 N.
inline constexpr double kT0 = 0.002, kT1 = 0.006, kR0 = 0.001, kR1 = 0.0015;

inline constexpr int64_t kServerBytes = int64_t{64} << 20;

// A gradient of 64 MiB: every shard's piece is large enough for its bytes to set its time.
inline FitRun server_run(const std::string& transport, int n) {
  FitRun run = synthetic_run(transport, n);
  run.measured.workload.bucket_bytes = {kServerBytes}, run.measured.workload.gradient_bytes = kServerBytes;
  const double moved = kT0 + kT1 * (n - 1.0) / n, rest = kR0 + kR1 * n;
  run.pieces = {{.what = "push", .index = -1, .start_s = 0.0, .end_s = moved / 2},
                {.what = "wait for servers", .index = -1, .start_s = moved / 2, .end_s = moved / 2 + rest},
                {.what = "pull", .index = -1, .start_s = moved / 2 + rest, .end_s = moved + rest}};
  run.transfer_s = moved;  // the comm split's push + pull, which the fit reads
  const double compute = transport == "ps-sync" ? slowest_of(n) : run.mean_compute_s;
  run.step_s = compute + moved + rest;
  return run;
}

}  // namespace dtbench
