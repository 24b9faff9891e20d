#pragma once
// One run as `dtbench report` sees it: what it needs from a run directory's report.json (and, for a
// run of several workers, each worker-<rank>.json), checked key by key so a broken file is named.
#include <array>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace dtbench {

// The six phases of a step, then the step itself (phases sum to the step).
inline constexpr size_t kReportPhaseCount = 7;
inline constexpr size_t kStepIndex = 6;
inline constexpr std::array<std::string_view, kReportPhaseCount> kReportPhases = {
    "load", "forward", "backward", "comm", "update", "other", "step"};

struct PhaseRecord {
  double sum_s = 0.0, mean_s = 0.0, median_s = 0.0, p95_s = 0.0;
};

struct EpochRecord {
  int epoch = 0;
  int64_t steps = 0;
  std::array<PhaseRecord, kReportPhaseCount> phases{};
  double train_seconds = 0.0, wall_seconds = 0.0, images_per_second = 0.0;
  double train_loss = 0.0, train_accuracy = 0.0, test_loss = 0.0, test_accuracy = 0.0;
};

// A worker's mean seconds per step over all epochs, from report.json's `workers.per_worker`.
struct WorkerMeans {
  int rank = 0;
  std::array<double, kReportPhaseCount> mean_s{};
};

struct RunRecord {
  std::filesystem::path path;  // the report.json read
  std::string name;            // the run directory's name
  std::string status, error, transport;
  int world = 1;
  double wall_seconds = 0.0, images_per_second = 0.0;
  std::vector<EpochRecord> epochs;
  std::vector<WorkerMeans> workers;                   // empty unless `workers` was present
  std::vector<std::vector<EpochRecord>> worker_epochs;  // [worker][epoch], from worker-<rank>.json
  int slowest_worker = -1;
  bool complete() const { return status == "complete"; }
  double final_accuracy() const { return epochs.empty() ? 0.0 : epochs.back().test_accuracy; }
};

// Reads `run_dir`/report.json; an InputError naming the file when it is missing, not JSON, or
// lacks a key the report needs.
RunRecord load_run(const std::filesystem::path& run_dir);

// Step-weighted mean seconds per step of each phase over epochs [first, end).
std::array<double, kReportPhaseCount> mean_phases(const std::vector<EpochRecord>& epochs, size_t first);

}  // namespace dtbench
