#include "launch/predict/backward_sharing.h"

#include <algorithm>

namespace dtbench {

namespace {

// The most of a second beside the allreduce that backward loses: the host's quota is shared by
// the threads that want it, and the scheduler gives backward's thread and the communication
// thread each half while both do. Uncapped, AlexNet's buckets on hosts of 0.3 core (2.25 ns a
// byte through the kernel on the Zen 3) took the whole quota: a fit on 2 hosts said their
// backward had lost 473 ms a step to them (rank 0 timed 551-587 in all), where the predicted
// runs' compute held from 2 to 4 hosts (docs/predict.md).
constexpr double kMostBackwardLosesASecond = 0.5;

}  // namespace

double backward_lost_per_second(const NetworkConstants& c, const Workload& workload, size_t k, int workers) {
  const NetworkConstants::BackwardSharing& host = c.backward_sharing;
  if (!(host.host_cores > 0) || !(host.cpu_s_per_byte > 0)) return 0.0;
  const double seconds = bucket_seconds(c, k, workload.bucket_bytes[k], workers);
  if (!(seconds > 0)) return 0.0;
  const AllreduceSteps steps = allreduce_steps(workload.bucket_bytes[k], workers, c.schedule);
  const double cpu = steps.wire_bytes * host.cpu_s_per_byte / 2 + steps.summed_bytes * c.reduce_s_per_byte;
  return std::min(kMostBackwardLosesASecond, cpu / seconds / host.host_cores);
}

double backward_lost_in_runs(const NetworkConstants& c, const Workload& workload, const std::vector<FitRun>& runs) {
  if (runs.empty()) return 0.0;
  double lost = 0;
  for (const FitRun& run : runs) {
    const double backward = run.measured.workload.compute.backward_s;
    for (const MeasuredPiece& p : run.pieces) {
      const auto k = static_cast<size_t>(p.index);
      if (p.what != "allreduce bucket" || p.index < 0 || k >= workload.bucket_bytes.size()) continue;
      const double beside = std::max(0.0, std::min(backward, p.end_s) - std::max(0.0, p.start_s));
      lost += beside * backward_lost_per_second(c, workload, k, run.measured.workers);
    }
  }
  return lost / static_cast<double>(runs.size());
}

double host_cores_of_every_run(const std::vector<FitRun>& runs) {
  if (runs.empty()) return 0.0;
  const double cores = runs.front().measured.host_cores;
  for (const FitRun& run : runs) {
    if (run.measured.host_cores != cores) return 0.0;
  }
  return cores;
}

}  // namespace dtbench
