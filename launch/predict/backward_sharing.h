#pragma once
// Backward on a host whose compute fills its CPU quota (an emulated host of a fraction of a core)
// shares that CPU with the allreduce beside it: a rank's bytes through the kernel and their
// summing take CPU that backward had, and backward grows by as much of its time as that CPU is of
// the quota's, for each second the allreduce runs beside it. The replay (replay.h) stretches each
// rank's backward so; a fit on runs tells it what their backward had already lost, which the
// measured backward holds (docs/predict.md, "Backward shares a full host's CPU").
#include <cstddef>
#include <vector>

#include "launch/predict/cost_model.h"
#include "launch/predict/fit_runs.h"

namespace dtbench {

// Seconds of backward that a second of bucket k's allreduce beside it takes on a host of
// c.backward_sharing's cores: the allreduce's CPU (a rank's wire bytes each way through the kernel,
// half a round trip's cpu_s_per_byte, and their summing) over its time, as a share of the host's
// cores; at most half (the scheduler shares the quota between backward's thread and the
// communication thread). 0 where c.backward_sharing names no cores or no CPU a byte.
double backward_lost_per_second(const NetworkConstants& c, const Workload& workload, size_t k, int workers);

// What the runs' backward lost to their allreduce buckets beside it at those rates, the mean per
// step over the runs: each bucket's span clipped to its run's backward.
double backward_lost_in_runs(const NetworkConstants& c, const Workload& workload, const std::vector<FitRun>& runs);

// The emulated hosts' CPU quota where every run's hosts held the same one; 0 otherwise (hosts of
// their own cores, or runs that differ).
double host_cores_of_every_run(const std::vector<FitRun>& runs);

}  // namespace dtbench
