#pragma once
// Steps of N ranks replayed rather than summed in a closed form (as Lumos and dPRO replay traces):
// each rank's compute drawn from the fit runs' per-step samples, its phases scaled to the draw, its
// buckets ready at the runs' shares of its own backward; a bucket's allreduce starts once every
// rank has it and the bucket before it is done (a synchronous allreduce waits for its last rank),
// and takes the fitted line's time (cost_model.h's bucket_seconds). So a slow rank costs the step
// only what the communication does not already wait: the closed form (run_fit.h) adds the slowest
// of N draws whole, after the last bucket.
#include <cstdint>
#include <vector>

#include "launch/predict/cost_model.h"

namespace dtbench {

struct ReplayedSteps {
  double step_s = 0.0;          // the mean over the replayed steps, the constants' step_overhead_s included
  double compute_s = 0.0;       // a rank's mean compute, with what its backward lost to the comm beside it
  double comm_total_s = 0.0;    // the buckets' allreduces, hidden or not
  std::vector<double> bucket_end_s{};  // each bucket's mean end, from the step's start
};

// `steps` steps of `workers` ranks drawing from `compute_samples` with a generator seeded by `seed`
// (the same figures every call). A step is timed from the previous step's last allreduce: every
// rank then runs its update, other, load and forward, and its backward, each its phase's share of
// the workload's compute times the rank's draw; it ends when the last bucket and every rank's
// backward have. Buckets, ready shares and overlap as the workload has them; on a host whose
// compute fills its quota (c.backward_sharing), each rank's backward stretched by the CPU the
// allreduce beside it takes (backward_sharing.h). InputError for no
// samples, fewer than 2 workers, or phases summing to nothing.
ReplayedSteps replay_allreduce_steps(const Workload& workload, const std::vector<double>& compute_samples,
                                     int workers, const NetworkConstants& c, int steps = 20000, uint64_t seed = 1);

}  // namespace dtbench
