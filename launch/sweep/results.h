#pragma once
// A sweep's results: every run's measurements read back from its run directory, their spread per
// configuration (median, min, max over the measured repetitions; warm-ups left out), comparisons
// with a rank test, written as results.csv (one row per run), results.json and results.md.
//
// Metrics, per run: run_s (the run's time: first worker's start to last worker's end, from
// report.json's `run`), process_s (the runner's clock: start-up and shutdown included), epoch_s
// (wall time per epoch, to the last worker's end of it), images_per_s (all workers: their images
// over the run's training span, launch/report/run_span.h), test_accuracy, and the mean per-step
// milliseconds of each phase: step_ms, load_ms, forward_ms, backward_ms, comm_ms, update_ms,
// other_ms (rank 0's). Per-step and per-second figures follow the warm-up rule: with more than
// one epoch, epoch 1 is left out. A capped run's times are +infinity — it counts, as slower than
// every run that finished — and it has no throughput or phases; a missing configuration has no
// runs at all.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "launch/report/table.h"
#include "launch/report/statistics.h"
#include "launch/sweep/plan.h"
#include "launch/sweep/runner.h"

namespace dtbench {

using RunMetrics = std::map<std::string, double>;

// The metrics of a finished run (empty for a failed one). IoError naming the file if a complete
// run's report.json cannot be read or lacks what the metrics need.
RunMetrics run_metrics(const SweepRun& run);

struct ConfigurationResult {
  SweepConfiguration configuration;
  std::vector<SweepRun> runs;  // measured and warm-up, in order
  std::vector<RunMetrics> metrics;  // per run, read once by summarize_sweep
  std::map<std::string, Spread> stats;  // over the measured runs that have the metric
  int64_t measured = 0, complete = 0, capped = 0, failed = 0;
};

struct ComparisonResult {
  std::string configuration, baseline, metric;
  double ratio = 0.0;  // median of the configuration over median of the baseline
  RankTest test;
};

struct SweepResults {
  std::vector<ConfigurationResult> configurations;
  std::vector<ComparisonResult> comparisons;
  std::vector<std::string> skipped_comparisons;  // "<configuration>: why", for the table's note
};

// Reads every run's metrics (a complete run whose report cannot be read becomes failed, with the
// reason), then the spreads and the comparisons.
SweepResults summarize_sweep(const SweepBlueprint& sweep, std::vector<ConfigurationResult> configurations);

std::vector<ReportTable> sweep_tables(const SweepBlueprint& sweep, const SweepResults& results);
// Writes results.csv, results.json and results.md into `dir`.
void write_sweep_results(const SweepBlueprint& sweep, const SweepResults& results, const std::filesystem::path& dir);

// The columns of results.csv, in order (documented in docs/sweeps.md).
std::vector<std::string> sweep_csv_columns(const SweepBlueprint& sweep);

}  // namespace dtbench
