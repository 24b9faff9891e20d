#pragma once
// The runs of smaller clusters that `dtbench predict --fit RUN_DIR...` fits its terms on: every
// rank's per-step compute (worker-<rank>.json's step_compute_s), the comm pieces and waits as the
// ranks timed them, the servers' costs, pooled over the ranks of each run. All runs must be of one
// model, transport and link; each names the file it lacks.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launch/predict/workload.h"

namespace dtbench {

struct FitRun {
  MeasuredRun measured{};                // rank 0's report: configuration, buckets, compute phases
  std::vector<double> compute_samples{};  // every rank's step less its comm, epochs after the first
  double mean_compute_s = 0.0;            // their mean
  double step_s = 0.0;                    // mean step over the ranks
  // Each comm piece's times, means over the ranks; and the part of a rank's wait for the last rank
  // to arrive that its last allreduce bucket's span holds (wait_inside_last_bucket), their mean.
  std::vector<MeasuredPiece> pieces{};
  double last_bucket_wait_s = 0.0;
  // No rank timed its wait for the last rank (PyTorch's DDP exchanges no arrival times): the waits
  // above were taken from the ranks' per-step compute (waits_from_step_compute).
  bool waits_from_compute = false;
  // Parameter servers: push + pull per step, the mean over the ranks, as their comm split has them
  // (with buckets the shards go at once, so their pieces overlap and do not add up).
  double transfer_s = 0.0;
};

// How much of a rank's wait for the last rank to arrive (`arrival_wait_s`, allreduce's comm_split
// wait_s, from its own backward's end) lies inside its last allreduce bucket's span: the slowest
// rank has that bucket ready at the rank's ready_s + arrival_wait_s, so the span waits from its
// start until then. None where the buckets before it took the wait (AlexNet's ring on 2 hosts:
// the faster rank waited 42.5 ms, and its last bucket began 205 ms after its backward ended), or
// where the span ends before the slowest rank could have the bucket ready (the means of steps that
// waited and steps that did not). 0 without allreduce buckets.
double wait_inside_last_bucket(const std::vector<MeasuredPiece>& pieces, double arrival_wait_s);

// Each rank's mean wait for the last rank to be done computing, from the ranks' per-step compute
// (`per_rank[r][i]`: rank r's compute in step i, the steps of a synchronous run lining up across
// ranks): in step i rank r waits max over ranks of per_rank[.][i] - per_rank[r][i]. For runs whose
// ranks did not time that wait; where the ring's ranks did, the two agree (LeNet-5 at 2 hosts
// 0.14 / 0.16 ms timed, 0.18 / 0.20 from the compute; AlexNet's slowest of 3: 74.8 and 68.8 ms).
// Empty where the ranks' step counts differ.
std::vector<double> waits_from_step_compute(const std::vector<std::vector<double>>& per_rank);

// One run directory: report.json and worker-<rank>.json for every rank (InputError naming the
// missing file, or a worker file without per-step compute: written before it was recorded).
FitRun load_fit_run(const std::filesystem::path& dir);
// Every directory, and checks they belong together (InputError naming the two runs that differ).
std::vector<FitRun> load_fit_runs(const std::vector<std::filesystem::path>& dirs);

}  // namespace dtbench
