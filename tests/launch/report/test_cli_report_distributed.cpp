// `dtbench report` on real two-rank runs under mpirun: every worker has its row and its bars, each
// worker's phases sum to its step, the comm split and the transport's bytes are shown, and each
// worker's sampled resources are charted; two transports side by side get a per-worker chart each.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "launch/report/charts.h"
#include "launch/report/run_record.h"
#include "support/cli_helpers.h"
#include "support/report_checks.h"
#include "support/xml_check.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::dtbench;
using testing::Outcome;
using testing::read_json;
using testing::read_text;
using testing::resource_curves_drawn;
using testing::xml_error;

class CliReportDistributed : public testing::MpirunTest {
 protected:
  void SetUp() override {
    MpirunTest::SetUp();
    // 32 steps an epoch per rank (~30 ms of MLP): long enough that a rank descheduled for a few ms
    // as it leaves the epoch's barrier, on a loaded 2-core machine, cannot halve the run's rate.
    data_ = synth("idx", 2048, 128);
  }

  // Two ranks x batch 32, two epochs of the mlp over `transport`; returns the run directory.
  fs::path train(const std::string& transport) {
    const fs::path runs = root_ / transport;
    const Outcome r = testing::shell(testing::mpirun(2) + " train --set model=mlp --set name=" + transport +
                                     " --set dataset.path=" + data_.string() + " --set output=" + runs.string() +
                                     " --set epochs=2 --set batch=32 --set threads=1 --set transport=" + transport);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return testing::only_child(runs);
  }

  fs::path data_;
};

// report.html of a 2-worker ring run: a per-worker chart, the warm-up epoch, resource charts with
// both workers in their legends (or, for too few samples, a note saying so).
void expect_html_shows_every_worker(const fs::path& run, const nlohmann::json& report) {
  const std::string name = run.filename().string();
  const std::string html = read_text(run / "report.html");
  EXPECT_EQ(xml_error(html), "");
  EXPECT_NE(html.find(">Per worker, " + name + " (ring), steady epochs</text>"), std::string::npos);
  EXPECT_NE(html.find(">epoch 1 (warm-up)</text>"), std::string::npos);
  EXPECT_NE(html.find(">Training time per epoch</text>"), std::string::npos);
  if (!resource_curves_drawn(load_run(run))) {
    EXPECT_NE(html.find("Too few resource samples to draw"), std::string::npos);
    return;
  }
  for (const char* chart : {">Process CPU</text>", ">Resident memory</text>"}) {
    EXPECT_NE(html.find(chart), std::string::npos) << chart;
  }
  // Both workers in the resource charts' legends (CPU and memory).
  size_t legends = 0;
  for (size_t at = html.find(">rank 1</text>"); at != std::string::npos; at = html.find(">rank 1</text>", at + 1)) {
    ++legends;
  }
  EXPECT_GE(legends, 2u);
  if (!report["resources"]["gpu"]["available"].get<bool>()) {
    EXPECT_NE(html.find("GPU not sampled: "), std::string::npos);
  }
}

TEST_F(CliReportDistributed, ARingRunShowsEveryWorkerAndEachWorkersPhasesSumToItsStep) {
  const fs::path run = train("ring");
  ASSERT_FALSE(run.empty());

  // train put the transport's bytes beside the sampled resources: what the comm split counted.
  const auto report = read_json(run / "report.json");
  double sent = 0;
  for (const auto& epoch : report["epochs"]) sent += epoch["comm_split"]["bytes_sent"].get<double>();
  EXPECT_GT(sent, 0);
  EXPECT_EQ(report["resources"]["transport_bytes"]["sent"].get<double>(), sent);
  EXPECT_TRUE(read_json(run / "worker-1.json")["resources"].contains("series"));
  // Each worker timed its buckets: ready inside backward, started no earlier, ended after; the
  // MLP's gradient in one bucket (25 MiB buckets by default).
  for (const char* file : {"worker-0.json", "worker-1.json"}) {
    const auto epoch = read_json(run / file)["epochs"].at(1);
    ASSERT_EQ(epoch["comm_timings"].size(), 1u) << epoch.dump(2);
    const auto& bucket = epoch["comm_timings"][0];
    EXPECT_EQ(bucket["what"], "allreduce bucket");
    EXPECT_EQ(bucket["steps"], epoch["steps"]);
    // The parameters' floats, each tensor padded to the arena's alignment.
    const int64_t parameter_bytes = report["model"]["parameters"].get<int64_t>() * 4;
    EXPECT_GE(bucket["bytes"].get<int64_t>(), parameter_bytes);
    EXPECT_LT(bucket["bytes"].get<int64_t>(), parameter_bytes + 1024);
    EXPECT_GT(bucket["ready_s"].get<double>(), 0);
    EXPECT_LE(bucket["ready_s"].get<double>(), epoch["phases"]["backward"]["mean_s"].get<double>() * 1.001 + 1e-6);
    EXPECT_LE(bucket["ready_s"].get<double>(), bucket["start_s"].get<double>());
    EXPECT_LT(bucket["start_s"].get<double>(), bucket["end_s"].get<double>());
  }
  // Each worker's mean phases sum to its mean step.
  ASSERT_EQ(report["workers"]["per_worker"].size(), 2u);
  for (const auto& worker : report["workers"]["per_worker"]) {
    const auto& phases = worker["mean_step_phases_s"];
    double sum = 0;
    for (const char* phase : {"load", "forward", "backward", "comm", "update", "other"}) {
      sum += phases[phase].get<double>();
    }
    EXPECT_NEAR(sum, phases["step"].get<double>(), testing::kPhaseSumTolerance * phases["step"].get<double>());
  }

  // The run's throughput is both workers' images together over the run's training span (epoch 2:
  // epoch 1 is warm-up), recomputed here from the workers' files, not rank 0's rate alone.
  double first_start = 1e300, last_step = -1e300;
  int64_t images = 0;
  for (const char* file : {"worker-0.json", "worker-1.json"}) {
    const auto epoch = read_json(run / file)["epochs"].at(1);  // a copy: the file's JSON is a temporary
    first_start = std::min(first_start, epoch["start_unix_s"].get<double>());
    last_step = std::max(last_step, epoch["steps_end_unix_s"].get<double>());
    images += epoch["images"].get<int64_t>();
  }
  const double all_workers = static_cast<double>(images) / (last_step - first_start);
  const RunRecord record = load_run(run);
  EXPECT_NEAR(record.images_per_second, all_workers, 1e-6 * all_workers);
  EXPECT_GT(record.images_per_second, 1.5 * report["summary"]["images_per_second"].get<double>());

  const Outcome r = dtbench("report " + run.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(fmt::format("images/s over the run, all workers: {:.0f}", all_workers)), std::string::npos)
      << r.output;
  for (const char* row : {"rank 0", "rank 1", "mean across workers", "min across workers", "max across workers",
                          "slowest worker (longest compute per step): rank", "wait ms (for the last rank)",
                          "transfer ms", "Resources per worker"}) {
    EXPECT_NE(r.output.find(row), std::string::npos) << row << "\n" << r.output;
  }

  // phases.csv: every worker's epochs beside rank 0's view, each summing to its step.
  const auto steps = testing::phases_csv_steps(read_text(run / "phases.csv"));
  const std::string name = run.filename().string();
  for (const std::string key : {"/1/all", "/2/all", "/1/0", "/2/0", "/1/1", "/2/1"}) {
    EXPECT_EQ(steps.count(name + key), 1u) << key;
  }
  testing::expect_phases_sum_to_steps(steps);

  expect_html_shows_every_worker(run, report);
}

TEST_F(CliReportDistributed, TwoTransportsSideBySideHaveAPerWorkerChartEach) {
  const fs::path ring = train("ring");
  const fs::path mpi = train("mpi");
  const fs::path out = root_ / "comparison";
  const Outcome r = dtbench("report " + ring.string() + " " + mpi.string() + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string html = read_text(out / "report.html");
  EXPECT_EQ(xml_error(html), "");
  EXPECT_NE(html.find(">Per worker, " + ring.filename().string() + " (ring), steady epochs</text>"), std::string::npos);
  EXPECT_NE(html.find(">Per worker, " + mpi.filename().string() + " (mpi), steady epochs</text>"), std::string::npos);
  EXPECT_EQ(html.find(">Process CPU, " + mpi.filename().string() + "</text>") != std::string::npos,
            resource_curves_drawn(load_run(mpi)));
  const std::string md = read_text(out / "report.md");
  EXPECT_NE(md.find("| " + mpi.filename().string() + " | mpi |"), std::string::npos) << md;
  testing::expect_phases_sum_to_steps(testing::phases_csv_steps(read_text(out / "phases.csv")));
}

}  // namespace
}  // namespace dtbench
