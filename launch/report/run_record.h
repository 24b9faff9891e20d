#pragma once
// One run as `dtbench report` sees it: what it needs from a run directory's report.json (and, for a
// run of several workers, each worker-<rank>.json), checked key by key so a broken file is named.
#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/report/resources.h"
#include "launch/report/run_context.h"

namespace dtbench {

// The six phases of a step, then the step itself (phases sum to the step).
inline constexpr size_t kReportPhaseCount = 7;
inline constexpr size_t kStepIndex = 6;
inline constexpr std::array<std::string_view, kReportPhaseCount> kReportPhases = {
    "load", "forward", "backward", "comm", "update", "other", "step"};

struct PhaseRecord {
  double sum_s = 0.0, mean_s = 0.0, median_s = 0.0, p95_s = 0.0;
};

// How the communication of a step divides up (report.json's comm_split): comm is what the step
// waited for (exposed), comm_total all of it, including what overlapped backward; allreduce splits
// it into wait (for the last rank to arrive) and transfer, parameter servers into push, wait and
// pull. Seconds and bytes, summed over an epoch's steps — or, in WorkerMeans, per step.
struct CommRecord {
  double comm_s = 0.0, comm_total_s = 0.0, wait_s = 0.0, transfer_s = 0.0, push_s = 0.0, pull_s = 0.0;
  double d2h_s = 0.0, h2d_s = 0.0;  // a model on a device: the arena's moves around a host transport
  double bytes_sent = 0.0, bytes_received = 0.0;
};

struct EpochRecord {
  int epoch = 0;
  int64_t steps = 0;
  std::array<PhaseRecord, kReportPhaseCount> phases{};
  CommRecord comm;  // zeros in reports written before the comm split was recorded
  double train_seconds = 0.0, wall_seconds = 0.0, images_per_second = 0.0;
  double train_loss = 0.0, train_accuracy = 0.0, test_loss = 0.0, test_accuracy = 0.0;
};

// A worker's mean seconds per step over the steady epochs, from report.json's `workers.per_worker`.
struct WorkerMeans {
  int rank = 0;
  std::array<double, kReportPhaseCount> mean_s{};
  CommRecord comm;  // per step: comm_total_s, wait_s, transfer_s, push_s, pull_s
};

struct RunRecord {
  std::filesystem::path path;  // the report.json read
  std::string name;            // the run directory's name
  std::string status, error, transport;
  std::string engine = "dtbench";  // who trained: dtbench | pytorch (provenance.engine.name)
  int world = 1;
  double wall_seconds = 0.0;       // the run's time: first worker's start to last worker's end
  double images_per_second = 0.0;  // all workers together, by run_span.h's rule
  std::vector<EpochRecord> epochs;
  std::vector<WorkerMeans> workers;                   // empty unless `workers` was present
  std::vector<std::vector<EpochRecord>> worker_epochs;  // [worker][epoch], from worker-<rank>.json
  int slowest_worker = -1;
  // Each worker's sampled resources (from worker-<rank>.json), or rank 0's alone (from report.json)
  // when the worker files are absent; empty for reports written before resources were sampled.
  std::vector<ResourceRecord> resources;
  RunContext context;  // model, batch, data, hosts, cores, threads, commit: what the run was
  bool complete() const { return status == "complete"; }
  bool parameter_server() const { return transport.starts_with("ps-"); }
  double final_accuracy() const { return epochs.empty() ? 0.0 : epochs.back().test_accuracy; }
};

// A run's images/s, all workers together, from its report.json: its `run` (run_span.h); for
// reports written before that, the sum of the workers' rates where rank 0 gathered them, else rank
// 0's own times the world.
double run_images_per_second(const nlohmann::json& report);
// A run's time from its report.json: `run.seconds`, else (older reports) rank 0's wall time.
double run_seconds(const nlohmann::json& report);

// Reads `run_dir`/report.json; an InputError naming the file when it is missing, not JSON, or
// lacks a key the report needs.
RunRecord load_run(const std::filesystem::path& run_dir);

// Step-weighted mean seconds per step of each phase over epochs [first, end).
std::array<double, kReportPhaseCount> mean_phases(const std::vector<EpochRecord>& epochs, size_t first);
// The comm split per step over epochs [first, end).
CommRecord mean_comm(const std::vector<EpochRecord>& epochs, size_t first);

}  // namespace dtbench
