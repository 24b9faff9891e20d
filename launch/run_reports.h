#pragma once
// What a training worker writes into its run directory (run_directory.h): worker-<rank>.json after
// every epoch and, on rank 0, report.json with every worker's phases, the run's span and network.
// Written after every epoch and, when the run fails, from whichever thread notices (the
// watchdog's, while the training thread is blocked in MPI): hence the lock.
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "comm/transport.h"
#include "launch/monitor/interface_traffic.h"
#include "launch/monitor/resource_sampler.h"
#include "launch/report/run_summary.h"
#include "launch/run_directory.h"

namespace dtbench {

class RunReports {
 public:
  RunReports(RunSummary& summary, ResourceSampler& sampler, Transport& transport)
      : summary_(summary), sampler_(sampler), transport_(transport) {}

  void open(RunDirectory run);
  const RunDirectory& run() const { return *run_; }
  void set_workers(std::vector<std::string> workers);
  const std::vector<std::string>& workers() const { return workers_; }
  void training_started() { training_started_ = true; }
  // This rank's interface traffic so far, into the summary it sends rank 0.
  void note_traffic();
  void write();
  void finish(const std::string& status, const std::string& error);

 private:
  void write_locked();

  std::mutex mutex_;
  RunSummary& summary_;
  ResourceSampler& sampler_;
  Transport& transport_;
  std::optional<RunDirectory> run_;
  std::vector<std::string> workers_;
  std::atomic<bool> training_started_ = false;
  const InterfaceTraffic traffic_;  // counted from the run's start
};

// Where the workers ran and what their links carried (report/network.h), from their reports.
nlohmann::json run_network(const std::vector<std::string>& worker_reports, const std::string& transport);

}  // namespace dtbench
