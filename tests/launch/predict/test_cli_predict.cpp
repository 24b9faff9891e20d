// dtbench predict end to end: a measured one-worker run, bench files of known constants, and what
// it writes; and the errors a user meets with bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using testing::dtbench;
using testing::Outcome;
using testing::read_json;

constexpr double kAlpha = 100e-6, kBeta = 110e6;  // the bench files' own constants, at 1gbit

class CliPredict : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    run_ = root_ / "run";
    const Outcome train = train_briefly("lenet5", run_, 3);
    ASSERT_EQ(train.exit_code, 0) << train.output;
    write_bench_files();
  }

  // bench allreduce and bench ps files whose times follow the model exactly (no reduce cost).
  void write_bench_files() {
    nlohmann::json ar_rows = nlohmann::json::array(), ps_rows = nlohmann::json::array();
    for (double bytes = 65536; bytes <= 32 << 20; bytes *= 4) {
      const double ring_us = 1e6 * 2 * (kAlpha + bytes / 2 / kBeta);  // two workers: two steps
      ar_rows.push_back({{"bytes", bytes}, {"ring", {{"time_us", ring_us}}}, {"mpi", {{"time_us", 1.5 * ring_us}}}});
      const double one_way_us = 1e6 * (kAlpha + bytes / kBeta);
      ps_rows.push_back({{"bytes", bytes}, {"push_us", one_way_us}, {"pull_us", one_way_us}, {"wait_us", 0.0}});
    }
    std::ofstream(root_ / "ar.json") << nlohmann::json{{"benchmark", "allreduce"}, {"world", 2}, {"rows", ar_rows}};
    std::ofstream(root_ / "ps.json") << nlohmann::json{
        {"benchmark", "ps"}, {"workers", 1}, {"shards", 1}, {"rows", ps_rows}};
  }

  Outcome predict(const std::string& more) {
    return dtbench("predict " + run_.string() + " --reduce-ns-per-byte 0 --out " + (root_ / "out").string() + " " +
                   more);
  }

  std::filesystem::path run_;  // root_/run, once SetUp has made root_
  std::string fits() const { return "--fit 1gbit:" + (root_ / "ar.json").string() + ",1gbit:" + (root_ / "ps.json").string(); }
};

TEST_F(CliPredict, PredictsFromTheRunAndTheFittedConstants) {
  const Outcome r = predict("--workers 2,4 --link 1gbit,100gbit " + fits());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Where the fastest transport changes"), std::string::npos) << r.output;

  // The compute alone, read from report.json independently: the mean non-comm phases of its one epoch.
  const auto report = read_json(run_ / "report.json");
  const auto& phases = report["epochs"].back()["phases"];
  double compute = 0;
  for (const char* phase : {"load", "forward", "backward", "update", "other"}) {
    compute += phases[phase]["mean_s"].get<double>();
  }
  const auto out = read_json(root_ / "out" / "predict.json");
  const double gradient = out["gradient_bytes"].get<double>();
  ASSERT_GT(gradient, 0);
  int checked = 0;
  for (const auto& row : out["predictions"]) {
    if (row["workers"] == 1) {
      EXPECT_NEAR(row["step_s"].get<double>(), compute, 1e-9 * compute) << row.dump();
    }
    if (row["workers"] == 2 && row["transport"] == "ring" && row["link"] == "1gbit") {
      // LeNet-5's gradient is one 25 MiB bucket: one allreduce, whose time the measured curve gives
      // at 2 ranks and 1gbit: log-log between the two bench sizes around it.
      double low = 65536;
      while (low * 4 < gradient) low *= 4;
      const auto ring_s = [](double bytes) { return 2 * (kAlpha + bytes / 2 / kBeta); };
      const double f = std::log(gradient / low) / std::log(4.0);
      const double comm = std::exp((1 - f) * std::log(ring_s(low)) + f * std::log(ring_s(4 * low)));
      EXPECT_NEAR(row["comm_total_s"].get<double>(), comm, 1e-9 * comm) << row.dump();
      EXPECT_NE(row["constants_source"].get<std::string>().find("measured medians"), std::string::npos);
      EXPECT_NE(row["constants_source"].get<std::string>().find("fitted at 1gbit"), std::string::npos);
      ++checked;
    }
    if (row["link"] == "100gbit") {
      EXPECT_NE(row["constants_source"].get<std::string>().find("extrapolated to 100gbit"), std::string::npos);
    }
  }
  EXPECT_EQ(checked, 1);
  EXPECT_TRUE(std::filesystem::exists(root_ / "out" / "predict.csv"));
  EXPECT_NE(testing::read_text(root_ / "out" / "predict.html").find("<svg"), std::string::npos);
}

// Hosts said to share 2 cores are named beside the servers; bench files without a TCP probe give
// the shared-cores terms nothing to charge, so the steps stay as with cores of their own.
// Workers twice as fast (--compute-speedup 2): the step of one worker, which is its compute
// alone, halves; the communication at two does not.
TEST_F(CliPredict, ComputeSpeedupDividesTheComputeAlone) {
  const auto at = [&](const std::string& more, int workers) {
    const Outcome r = predict("--workers 2 --link 1gbit --transport ring " + fits() + more);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const nlohmann::json out = read_json(root_ / "out" / "predict.json");
    for (const auto& row : out["predictions"]) {
      if (row["workers"] == workers) return std::make_pair(row["step_s"].get<double>(), row["comm_total_s"].get<double>());
    }
    ADD_FAILURE() << "no row at " << workers << " workers";
    return std::make_pair(0.0, 0.0);
  };
  const double one = at("", 1).first, one_faster = at(" --compute-speedup 2", 1).first;
  EXPECT_NEAR(one_faster, one / 2, 1e-9 * one);
  const double comm = at("", 2).second, comm_faster = at(" --compute-speedup 2", 2).second;
  EXPECT_NEAR(comm_faster, comm, 1e-9 * comm);
}

TEST_F(CliPredict, SharedCoresAreNamedAndNeedTheProbe) {
  ASSERT_EQ(predict("--workers 4 --link 1gbit " + fits()).exit_code, 0);
  const auto own = read_json(root_ / "out" / "predict.json");
  const Outcome r = predict("--workers 4 --link 1gbit --shared-cores 2 " + fits());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto shared = read_json(root_ / "out" / "predict.json");
  EXPECT_NE(shared["servers"].get<std::string>().find("every host on 2 shared core(s)"), std::string::npos)
      << shared["servers"];
  ASSERT_EQ(own["predictions"].size(), shared["predictions"].size());
  for (size_t k = 0; k < own["predictions"].size(); ++k) {
    EXPECT_DOUBLE_EQ(own["predictions"][k]["step_s"].get<double>(), shared["predictions"][k]["step_s"].get<double>());
  }
}

// bench allreduce records what summing a received byte costs on the cluster's host; predict takes
// that, not a timing of the machine it runs on: the constants and steps of --reduce-ns-per-byte
// with the recorded value. A recorded value that is no cost is refused, named.
TEST_F(CliPredict, TheSummingCostABenchFileRecordedIsTakenOverThisMachinesTiming) {
  struct Predicted {
    double reduce_ns_per_byte = -1, step_s = -1;  // the ring's at 1gbit; its step at 4 workers
  };
  const auto predict_ring = [&](const std::string& summing, const std::string& out) {
    const Outcome r = dtbench("predict " + run_.string() + " " + summing + " --workers 4 --link 1gbit --transport ring " +
                              fits() + " --out " + (root_ / out).string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const nlohmann::json predicted = read_json(root_ / out / "predict.json");
    Predicted p{.reduce_ns_per_byte = predicted["constants"]["1gbit"]["ring"]["reduce_ns_per_byte"].get<double>()};
    for (const auto& row : predicted["predictions"]) {
      if (row["workers"] == 4) p.step_s = row["step_s"].get<double>();
    }
    return p;
  };
  nlohmann::json ar = read_json(root_ / "ar.json");
  ar["reduce_ns_per_byte"] = 2.0;
  std::ofstream(root_ / "ar.json") << ar;
  const Predicted recorded = predict_ring("", "recorded"), given = predict_ring("--reduce-ns-per-byte 2", "given");
  EXPECT_DOUBLE_EQ(recorded.reduce_ns_per_byte, 2.0);
  EXPECT_GT(recorded.step_s, 0.0);
  EXPECT_DOUBLE_EQ(recorded.step_s, given.step_s);
  EXPECT_DOUBLE_EQ(predict_ring("--reduce-ns-per-byte 0", "none").reduce_ns_per_byte, 0.0);

  ar["reduce_ns_per_byte"] = -1.0;
  std::ofstream(root_ / "ar.json") << ar;
  const Outcome bad = dtbench("predict " + run_.string() + " " + fits());
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("ar.json: reduce_ns_per_byte is -1.0, expected a number of nanoseconds >= 0"),
            std::string::npos)
      << bad.output;
}

TEST_F(CliPredict, BadInputIsNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--link 10gbps " + fits(), "unknown link rate '10gbps'"},
      {"--transport nccl " + fits(), "unknown transport 'nccl'"},
      {"--fit 1gbit:" + (root_ / "missing.json").string(), "missing.json: no such file"},
      {"--fit " + (root_ / "ar.json").string(), "expected LINK:FILE"},
      {"--transport ps-sync --fit 1gbit:" + (root_ / "ar.json").string(), "no measurement of ps-sync"},
      {"", "predict needs measured constants"}};
  for (const auto& [arguments, message] : cases) {
    const Outcome r = predict(arguments);
    EXPECT_NE(r.exit_code, 0) << arguments;
    EXPECT_NE(r.output.find(message), std::string::npos) << arguments << "\n" << r.output;
  }
  const Outcome missing = dtbench("predict " + (root_ / "nowhere").string() + " " + fits());
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("nowhere does not exist"), std::string::npos) << missing.output;
}

}  // namespace
}  // namespace dtbench
