#pragma once
// The run's time and throughput, one rule for `train`, `report` and `sweep`: from every worker's
// per-epoch system-clock times (worker-<rank>.json). Workers of an asynchronous run finish at
// different times, so a sum of per-worker rates overstates the run: a straggler's slow steps are
// hidden by the fast workers' rates, and rank 0's time is not the run's.
//
//   run time    = the last worker's end (its last evaluation) − the first worker's start
//   throughput  = all workers' images over the steady epochs / Σ over those epochs of
//                 (the last worker's last step − the first worker's start of the epoch)
// Every worker meets the others after each epoch (the reports are gathered), so the epochs line
// up across workers, and the sum leaves out the evaluations and reports between epochs, as a
// training throughput should. Steady epochs follow the warm-up rule (core/profile/profiler.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench {

struct RunSpan {
  int workers = 0;
  double start_unix_seconds = 0.0, end_unix_seconds = 0.0;
  double seconds = 0.0;                  // the run's time: end − start
  int64_t images = 0;                    // all workers, all epochs
  int64_t steady_images = 0;             // all workers, the steady epochs
  double steady_training_seconds = 0.0;  // the sum over the steady epochs of their training spans
  double images_per_second = 0.0;        // steady_images / steady_training_seconds
  std::string steady_epochs;             // which epochs the throughput covers, in words
  std::vector<double> epoch_end_unix_seconds;  // per epoch, the last worker's end of it
  // Seconds per epoch: the run's time for one epoch; else from the end of epoch 1 to the end of
  // the last over the epochs after the first (the warm-up rule). 0 when unknown.
  double epoch_seconds() const;
};

// From the reports of every worker (report_json of each, as gathered or read from
// worker-<rank>.json). Nullopt when a report lacks the per-epoch times (written before they were
// recorded) or has no epoch.
std::optional<RunSpan> run_span(const std::vector<nlohmann::json>& worker_reports);

// From this worker's report and, on rank 0, every worker's as gathered (their JSON text).
std::optional<RunSpan> run_span_of(const nlohmann::json& own, const std::vector<std::string>& gathered);

nlohmann::json run_span_json(const RunSpan& span);
// One line for the console: workers, images, the run's time and its throughput.
std::string run_span_line(const RunSpan& span);
// The `run` object of a report.json; nullopt when it has none (older reports).
std::optional<RunSpan> read_run_span(const nlohmann::json& report);

// "epochs 2-4 (epoch 1 left out as warm-up)" or "epoch 1 (the only one: nothing left out)".
std::string steady_epochs_label(size_t epochs);

}  // namespace dtbench
