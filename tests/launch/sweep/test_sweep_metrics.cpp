// A sweep reads a run's figures by the same rule as `train` and `report`: run_s is the run's span,
// epoch_s its epochs' (to the last worker's ends), images_per_s its throughput (report.json's
// `run`, not rank 0's time or a sum of rates), the per-step milliseconds the steady epochs'.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "launch/sweep/results.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using nlohmann::json;

json phases_of(double step_seconds) {
  json phases = json::object();
  for (const char* phase : {"load", "forward", "backward", "comm", "update", "other", "step"}) {
    const bool whole = std::string(phase) == "forward" || std::string(phase) == "step";
    phases[phase] = {{"mean_s", whole ? step_seconds : 0.0}};
  }
  return phases;
}

class SweepMetrics : public testing::TempDirTest {};

TEST_F(SweepMetrics, AreTheRunsSpanAndThroughputAndTheSteadyEpochsPhases) {
  // Three asynchronous workers: rank 0 alone took 11 s at 1,280 images/s, while the run spanned
  // 41 s at 480 images/s; epoch 1's steps took 50 ms, the steady epochs' 10 ms.
  const json report = {
      {"status", "complete"},
      {"world", 3},
      {"wall_seconds", 11.0},
      {"epochs", {{{"wall_seconds", 5.0}}, {{"wall_seconds", 11.0}}}},
      {"summary",
       {{"images_per_second", 1280.0}, {"final_test_accuracy", 0.8}, {"all_epochs_phases", phases_of(0.030)},
        {"steady_phases", phases_of(0.010)}}},
      {"workers", {{"per_worker", {{{"images_per_second", 1280.0}}, {{"images_per_second", 160.0}},
                                   {{"images_per_second", 1100.0}}}}}},
      {"run", {{"seconds", 41.0}, {"images_per_second", 480.0}, {"epoch_end_unix_s", {1020.0, 1041.0}}}}};
  std::ofstream(root_ / "report.json") << report.dump();
  SweepRun run;
  run.dir = root_;
  run.status = "complete";
  run.process_seconds = 45.0;
  const RunMetrics m = run_metrics(run);
  EXPECT_DOUBLE_EQ(m.at("run_s"), 41.0);
  EXPECT_DOUBLE_EQ(m.at("images_per_s"), 480.0);
  EXPECT_DOUBLE_EQ(m.at("step_ms"), 10.0);
  EXPECT_DOUBLE_EQ(m.at("forward_ms"), 10.0);
  // Epoch 2 alone (epoch 1 is warm-up), ending when its last worker did: 21 s, where rank 0's own
  // epoch took 6 s.
  EXPECT_DOUBLE_EQ(m.at("epoch_s"), 21.0);
  EXPECT_DOUBLE_EQ(m.at("process_s"), 45.0);
}

}  // namespace
}  // namespace dtbench
