#include "launch/report/run_warnings.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "launch/report/format.h"

namespace dtbench {

std::string divergence(const RunRecord& run) {
  if (run.epochs.empty()) return "";
  const double first_loss = run.epochs.front().train_loss;
  const EpochRecord* best = &run.epochs.front();
  for (const auto& e : run.epochs) {
    if (!std::isfinite(e.train_loss) || !std::isfinite(e.test_loss)) {
      return fmt::format("the loss is not finite in epoch {}", e.epoch);
    }
    const double loss = std::max(e.train_loss, e.test_loss);
    if (first_loss > 0 && loss > kExplodingLossFactor * first_loss) {
      return fmt::format("the loss exploded to {:.3g} in epoch {} ({:.1f}x epoch 1's training loss)", loss, e.epoch,
                         loss / first_loss);
    }
    if (e.test_accuracy > best->test_accuracy) best = &e;
  }
  const double final_accuracy = run.epochs.back().test_accuracy;
  if (best->test_accuracy - final_accuracy > kAccuracyCollapse) {
    return fmt::format("its final test accuracy {} is far below its best, {} in epoch {}",
                       percent_text(final_accuracy), percent_text(best->test_accuracy), best->epoch);
  }
  return "";
}

double other_busy_cores(const RunRecord& run) {
  const int cores = run.context.cores;
  if (run.resources.empty() || cores <= 0) return std::numeric_limits<double>::quiet_NaN();
  // Per host: the machine's busy cores (as its workers saw them, averaged) less the workers' own.
  struct HostLoad {
    double machine_cores = 0.0, own_cores = 0.0;
    int workers = 0;
  };
  std::map<std::string, HostLoad> hosts;
  for (const ResourceRecord& r : run.resources) {
    const auto rank = static_cast<size_t>(r.rank);
    // An emulated cluster's hosts are one machine: every worker of the run is its own load there.
    const std::string machine = run.context.emulated_cluster || rank >= run.context.hosts.size()
                                    ? std::string()
                                    : run.context.hosts[rank];
    HostLoad& host = hosts[machine];
    host.machine_cores += r.core_percent_mean / 100.0 * cores;
    host.own_cores += r.cpu_percent_mean / 100.0;
    ++host.workers;
  }
  // The cluster's fillers keep the cores the hosts leave busy while no host wants them: theirs is
  // no other process's load.
  const double fillers = run.context.emulated_cluster ? run.context.filler_cores : 0.0;
  double most = 0.0;
  for (const auto& [name, host] : hosts) {
    most = std::max(most, host.machine_cores / host.workers - host.own_cores - fillers);
  }
  return most;
}

std::vector<RunWarning> run_warnings(const RunRecord& run) {
  std::vector<RunWarning> warnings;
  const RunContext& c = run.context;
  const int workers_on_host = c.most_workers_on_a_host(run.world);
  const double host_cores = c.host_cores > 0 ? c.host_cores : c.cores;
  if (host_cores > 0 && c.threads > 0 && workers_on_host * c.threads > host_cores + 0.01) {
    warnings.push_back({"oversubscribed", fmt::format("{} worker(s) x {} BLAS thread(s) on a host of {:.3g} "
                                                      "core(s); workers wait for a core, not only for each other",
                                                      workers_on_host, c.threads, host_cores)});
  }
  if (c.time_sliced) {
    warnings.push_back({"time-sliced hosts", fmt::format("the emulated hosts were promised {:.3g} core(s) each, more "
                                                         "than this machine's {} core(s) hold: they took turns, so "
                                                         "no host was sure of its share", c.host_cores, c.cores)});
  }
  if (c.hosts_share_cores() && c.ranks_yield == false) {
    warnings.push_back({"polling ranks", fmt::format("the emulated hosts hold {:.3g} core(s) each and the MPI ranks "
                                                     "polled while they waited: a polling rank spends its host's "
                                                     "quota and delays its own messages (give mpirun -x "
                                                     "OMPI_MCA_mpi_yield_when_idle=1, as the cluster's rsh agent does)",
                                                     c.host_cores)});
  }
  // Measured on hosts of half a core (docs/parameter-servers.md): the shards' calls and the server
  // beside each worker take their CPU from backward, and the sync step waits for the slowest.
  if (run.transport == "ps-sync" && c.overlapped && c.hosts_share_cores() && c.host_cores < 1.0) {
    warnings.push_back({"bucketed pushes", fmt::format("ps-sync pushed its shards during backward on hosts of {:.3g} "
                                                       "core(s), where they and the server beside each worker take "
                                                       "backward's CPU: on such hosts ps-sync has stepped 6-25 % faster "
                                                       "with comm.overlap=false (docs/parameter-servers.md); measure "
                                                       "both before ranking it",
                                                       c.host_cores)});
  }
  const double others = other_busy_cores(run);
  if (std::isfinite(others) && others >= 0.5 && others > kBusyShareOfCores * c.cores) {
    warnings.push_back({"machine busy", fmt::format("other processes kept {:.1f} of {} core(s) busy "
                                                    "during the run; its times include waiting for them",
                                                    others, c.cores)});
  }
  if (c.synthetic) {
    warnings.push_back({"synthetic data", fmt::format("{}: accuracies say nothing about the model, "
                                                      "only the speed figures carry over", c.data_path)});
  }
  if (const std::string why = divergence(run); !why.empty()) {
    warnings.push_back({"diverged", fmt::format("{}; it is credited no time to accuracy", why)});
  }
  return warnings;
}

}  // namespace dtbench
