// The headline figures on runs built by hand, with known numbers: the run's time and throughput
// from its workers' times (not a sum of their rates, not rank 0's time), the same in report.json
// and in `dtbench report`; percentiles over several epochs that are those of their steps; the
// warm-up epoch left out of steady figures and said so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "launch/report/run_record.h"
#include "launch/report/run_span.h"
#include "launch/report/run_summary.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// One epoch of a worker's report: its times on the system clock, its images, and phases enough
// for the report's reader (every step 10 ms of forward).
json epoch_json(int epoch, double start, double steps_end, double end, int64_t images) {
  json phases = json::object();
  for (const auto phase : kReportPhases) {
    const double sum = phase == "forward" || phase == "step" ? 0.010 * 10 : 0.0;
    phases[std::string(phase)] = {{"sum_s", sum}, {"mean_s", sum / 10}, {"median_s", sum / 10}, {"p95_s", sum / 10}};
  }
  return {{"epoch", epoch},          {"steps", 10},          {"phases", phases},
          {"test_loss", 0.5},        {"test_accuracy", 0.8}, {"images", images},
          {"start_unix_s", start},   {"steps_end_unix_s", steps_end},
          {"end_unix_s", end},       {"images_per_second", static_cast<double>(images) / (steps_end - start)}};
}

json worker_json(int rank, std::vector<json> epochs) {
  return {{"rank", rank}, {"status", "complete"}, {"world", 3}, {"transport", "ps-async"}, {"epochs", epochs}};
}

// Three workers, one epoch each, 6400 images each; rank 1 is the straggler, whose last step ends
// 40 s after the first worker started and whose evaluation ends at 41 s.
std::vector<json> straggler_run() {
  return {worker_json(0, {epoch_json(1, 1000.0, 1010.0, 1011.0, 6400)}),
          worker_json(1, {epoch_json(1, 1000.2, 1040.0, 1041.0, 6400)}),
          worker_json(2, {epoch_json(1, 1000.1, 1012.0, 1013.0, 6400)})};
}

TEST(RunSpan, IsTotalImagesOverTheSpanNotTheSumOfRates) {
  const auto span = run_span(straggler_run());
  ASSERT_TRUE(span);
  EXPECT_EQ(span->workers, 3);
  EXPECT_EQ(span->images, 19200);
  EXPECT_DOUBLE_EQ(span->seconds, 41.0);
  EXPECT_DOUBLE_EQ(span->images_per_second, 19200.0 / 40.0);
  EXPECT_DOUBLE_EQ(span->epoch_seconds(), 41.0);  // one epoch: the run's time
  // The sum of the workers' own rates: 640 + 160.8 + 537.8 images/s, nearly three times as many.
  double rates = 0.0;
  for (const json& w : straggler_run()) rates += w["epochs"][0]["images_per_second"].get<double>();
  EXPECT_GT(rates, 2.5 * span->images_per_second);
}

TEST(RunSpan, LeavesTheWarmUpEpochOutOfTheThroughputButNotTheRunTime) {
  // Epoch 1 (warm-up) is slow; epoch 2 trains from 1020 to 1030 on the first worker, to 1034 on
  // the second. Images per worker: 100 in epoch 1, 1000 in epoch 2.
  const std::vector<json> workers = {
      worker_json(0, {epoch_json(1, 1000.0, 1015.0, 1016.0, 100), epoch_json(2, 1020.0, 1030.0, 1031.0, 1000)}),
      worker_json(1, {epoch_json(1, 1000.5, 1018.0, 1019.0, 100), epoch_json(2, 1020.3, 1034.0, 1035.0, 1000)})};
  const auto span = run_span(workers);
  ASSERT_TRUE(span);
  EXPECT_DOUBLE_EQ(span->seconds, 35.0);
  EXPECT_EQ(span->images, 2200);
  EXPECT_EQ(span->steady_images, 2000);
  EXPECT_DOUBLE_EQ(span->steady_training_seconds, 14.0);
  EXPECT_DOUBLE_EQ(span->images_per_second, 2000.0 / 14.0);
  EXPECT_EQ(span->steady_epochs, "epoch 2 (epoch 1 left out as warm-up)");
  EXPECT_EQ(span->epoch_end_unix_seconds, (std::vector<double>{1019.0, 1035.0}));
  EXPECT_DOUBLE_EQ(span->epoch_seconds(), 16.0);  // epoch 2, from the last end of epoch 1 to its last end
}

TEST(RunSpan, NoneForReportsWithoutTheTimes) {
  json old = straggler_run()[0];
  old["epochs"][0].erase("steps_end_unix_s");
  EXPECT_FALSE(run_span({old}));
  EXPECT_FALSE(run_span({}));
}

class HandBuiltRun : public testing::TempDirTest {
 protected:
  // report.json as rank 0 writes it, with each worker's rate, and the workers' own files.
  void write_run(bool with_worker_files) {
    const std::vector<json> workers = straggler_run();
    json report = workers[0];
    json per_worker = json::array();
    for (const json& w : workers) {
      json phases = json::object();
      for (const auto phase : kReportPhases) phases[std::string(phase)] = 0.0;
      per_worker.push_back({{"rank", w["rank"]}, {"mean_step_phases_s", phases},
                            {"images_per_second", w["epochs"][0]["images_per_second"]}});
      if (with_worker_files) write(fmt::format("worker-{}.json", w["rank"].get<int>()), w);
    }
    report["workers"] = {{"per_worker", per_worker}, {"slowest_worker", 1}};
    report["wall_seconds"] = 11.0;  // rank 0's own time, which is not the run's
    report["run"] = run_span_json(*run_span(workers));
    write("report.json", report);
  }
  void write(const std::string& name, const json& value) { std::ofstream(root_ / name) << value.dump(2); }
};

TEST_F(HandBuiltRun, ReportComputesTheRunsFiguresFromTheWorkersFiles) {
  write_run(true);
  const RunRecord run = load_run(root_);
  EXPECT_DOUBLE_EQ(run.images_per_second, 480.0);
  EXPECT_DOUBLE_EQ(run.wall_seconds, 41.0);
}

TEST_F(HandBuiltRun, WithoutTheWorkersFilesReportTakesTheRunFromReportJson) {
  write_run(false);
  const RunRecord run = load_run(root_);
  EXPECT_DOUBLE_EQ(run.images_per_second, 480.0);
  EXPECT_DOUBLE_EQ(run.wall_seconds, 41.0);
  const json report = testing::read_json(root_ / "report.json");
  EXPECT_DOUBLE_EQ(run_images_per_second(report), 480.0);
  EXPECT_DOUBLE_EQ(run_seconds(report), 41.0);
}

// An epoch whose steps take these many milliseconds, all of it forward.
EpochResult epoch_of(int64_t number, const std::vector<double>& step_ms) {
  EpochResult e;
  e.epoch = number;
  for (const double ms : step_ms) {
    StepTimes t;
    t[Phase::Forward] = t.total = ms / 1e3;
    e.steps.push_back(t);
    e.train_seconds += t.total;
  }
  e.phases = summarize_steps(e.steps);
  e.images = 32 * static_cast<int64_t>(step_ms.size());
  return e;
}

// The median (mean of the middle two) and nearest-rank p95 of these values, computed here.
std::pair<double, double> median_and_p95(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(n)));
  return {median, values[rank - 1]};
}

TEST(RunSummary, PercentilesOverSeveralEpochsAreThoseOfTheirSteps) {
  // Epoch 1 is warm-up; epochs 2 and 3 differ, so that a step-weighted mean of their medians
  // (2 ms × 3 + 15 ms × 2) / 5 = 7.2 ms is far from the median of their five steps, 3 ms.
  RunSummary summary;
  summary.epochs = {epoch_of(1, {50}), epoch_of(2, {1, 2, 3}), epoch_of(3, {10, 20})};
  const auto [median, p95] = median_and_p95({1, 2, 3, 10, 20});
  const json report = report_json(summary);
  const json& later = report["summary"]["later_epochs_phases"]["step"];
  EXPECT_DOUBLE_EQ(later["median_s"].get<double>(), median / 1e3);
  EXPECT_DOUBLE_EQ(later["p95_s"].get<double>(), p95 / 1e3);
  EXPECT_DOUBLE_EQ(later["mean_s"].get<double>(), (1 + 2 + 3 + 10 + 20) / 5.0 / 1e3);
  EXPECT_EQ(report["summary"]["steady_phases"], report["summary"]["later_epochs_phases"]);
  EXPECT_EQ(report["summary"]["steady_epochs"], "epochs 2-3 (epoch 1 left out as warm-up)");
  const auto [all_median, all_p95] = median_and_p95({50, 1, 2, 3, 10, 20});
  EXPECT_DOUBLE_EQ(report["summary"]["all_epochs_phases"]["step"]["median_s"].get<double>(), all_median / 1e3);
  EXPECT_DOUBLE_EQ(report["summary"]["all_epochs_phases"]["step"]["p95_s"].get<double>(), all_p95 / 1e3);
  // The console's breakdown names the epochs it covers and shows the same median.
  const std::string table = breakdown_table(summary.epochs);
  EXPECT_NE(table.find("epochs 2-3 (epoch 1 left out as warm-up)"), std::string::npos) << table;
  EXPECT_NE(table.find(fmt::format("{:>10.3f} {:>10.3f}", (1 + 2 + 3 + 10 + 20) / 5.0, median)), std::string::npos)
      << table;
}

TEST(RunSummary, OneEpochIsAllSteadyAndSaysSo) {
  RunSummary summary;
  summary.epochs = {epoch_of(1, {4, 1, 3})};
  const json report = report_json(summary);
  EXPECT_EQ(report["summary"]["steady_phases"], report["summary"]["first_epoch_phases"]);
  EXPECT_EQ(report["summary"]["steady_epochs"], "epoch 1 (the only one: nothing left out as warm-up)");
  EXPECT_NE(breakdown_table(summary.epochs).find("nothing left out as warm-up"), std::string::npos);
}

}  // namespace
}  // namespace dtbench
