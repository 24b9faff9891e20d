// dtbench predict --fit RUN_DIR...: what a user meets with bad runs to fit on — each error names
// the file or the runs, and what was expected — and what it reads of a run its ranks timed less of.
#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "launch/predict/fit_runs.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using testing::dtbench;
using testing::Outcome;
using testing::read_json;

class CliPredictRuns : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    const Outcome train = train_briefly("lenet5", root_ / "a", 3);
    ASSERT_EQ(train.exit_code, 0) << train.output;
    // As if on the emulated cluster at 1gbit, the link a prediction is for.
    edit(root_ / "a" / "report.json", [](nlohmann::json& j) { j["network"]["cluster"]["link"] = "1gbit"; });
    std::filesystem::copy(root_ / "a", root_ / "b", std::filesystem::copy_options::recursive);
  }

  template <typename Edit>
  void edit(const std::filesystem::path& file, Edit change) {
    nlohmann::json j = read_json(file);
    change(j);
    std::ofstream(file) << j.dump();
  }

  Outcome predict(const std::string& arguments) { return dtbench("predict " + arguments + " --workers 4"); }
  std::string runs() const { return "--fit " + (root_ / "a").string() + "," + (root_ / "b").string(); }
};

TEST_F(CliPredictRuns, AMissingWorkerFileIsNamed) {
  std::filesystem::remove(root_ / "b" / "worker-0.json");
  const Outcome r = predict(runs());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find((root_ / "b" / "worker-0.json").string() + ": missing"), std::string::npos) << r.output;
}

TEST_F(CliPredictRuns, AWorkerFileWithoutPerStepComputeIsNamed) {
  edit(root_ / "b" / "worker-0.json", [](nlohmann::json& j) {
    for (auto& epoch : j["epochs"]) epoch.erase("step_compute_s");
  });
  const Outcome r = predict(runs());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("worker-0.json: epochs[0] has no step_compute_s"), std::string::npos) << r.output;
}

TEST_F(CliPredictRuns, ARunOfAnotherTransportIsRefused) {
  edit(root_ / "b" / "report.json", [](nlohmann::json& j) { j["transport"] = "ring"; });
  const Outcome r = predict(runs());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("differ in transport"), std::string::npos) << r.output;
}

TEST_F(CliPredictRuns, OneRunAloneOrAOneWorkerRunIsRefused) {
  const Outcome one = predict("--fit " + (root_ / "a").string());
  EXPECT_NE(one.exit_code, 0);
  EXPECT_NE(one.output.find("one run to fit on"), std::string::npos) << one.output;
  const Outcome alone = predict(runs());  // both runs are of one worker: nothing communicated
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_NE(alone.output.find("has one worker"), std::string::npos) << alone.output;
}

// Options that shape a prediction from one run and the benches would be silently dropped by a fit
// on runs, whose runs fix them: each given one is named. --compute-speedup applies to both.
TEST_F(CliPredictRuns, OptionsTheFitRunsFixAreRefused) {
  const Outcome r = predict(runs() + " --link 10gbit --servers-apart");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--link, --servers-apart shape a prediction from one run"), std::string::npos) << r.output;
  const Outcome speedup = predict(runs() + " --compute-speedup 2");
  EXPECT_NE(speedup.exit_code, 0);
  EXPECT_EQ(speedup.output.find("shape a prediction from one run"), std::string::npos) << speedup.output;
  EXPECT_NE(speedup.output.find("has one worker"), std::string::npos) << speedup.output;
}

TEST_F(CliPredictRuns, ARunDirBesideTheFitRunsIsRefused) {
  const Outcome r = predict((root_ / "a").string() + " " + runs());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("would be unused"), std::string::npos) << r.output;
}

// A run of two ranks whose worker files time no wait for the last rank (PyTorch's DDP exchanges no
// arrival times): each rank's wait comes from the ranks' compute in each step, and the part its one
// bucket's span holds (all of it: the bucket begins as backward ends) is not taken as the bucket's
// own time. Rank 0 computed 1, 4 and 2 ms, rank 1 3, 1 and 2: they waited 2/3 and 1 ms a step.
TEST_F(CliPredictRuns, AWaitTheRanksDidNotTimeIsTakenFromTheirComputeInEachStep) {
  const auto dir = root_ / "a";
  edit(dir / "report.json", [](nlohmann::json& j) { j["world"] = 2; });
  const std::vector<std::vector<double>> computes = {{1e-3, 4e-3, 2e-3}, {3e-3, 1e-3, 2e-3}};
  for (int rank = 0; rank < 2; ++rank) {
    const auto file = dir / fmt::format("worker-{}.json", rank);
    if (rank == 1) std::filesystem::copy_file(dir / "worker-0.json", file);
    edit(file, [&](nlohmann::json& j) {
      for (auto& epoch : j["epochs"]) {
        epoch["steps"] = 3;
        epoch["step_compute_s"] = computes[static_cast<size_t>(rank)];
        epoch["comm_split"]["wait_s"] = 0.0;
        epoch["comm_timings"] = nlohmann::json::array({{{"what", "allreduce bucket"}, {"index", 0}, {"bytes", 4096},
                                                        {"ready_s", 0.005}, {"start_s", 0.005}, {"end_s", 0.015},
                                                        {"steps", 3}}});
      }
    });
  }
  const FitRun untimed = load_fit_run(dir);
  EXPECT_TRUE(untimed.waits_from_compute);
  EXPECT_NEAR(untimed.last_bucket_wait_s, (2e-3 / 3 + 1e-3) / 2, 1e-12);

  // A rank that timed its wait (dtbench's ring exchanges arrival times) is taken at its word.
  edit(dir / "worker-1.json", [](nlohmann::json& j) {
    for (auto& epoch : j["epochs"]) epoch["comm_split"]["wait_s"] = 3 * 2e-3;  // 2 ms a step
  });
  const FitRun timed = load_fit_run(dir);
  EXPECT_FALSE(timed.waits_from_compute);
  EXPECT_NEAR(timed.last_bucket_wait_s, 2e-3 / 2, 1e-12);

  // Untimed again, but steps that do not line up (rank 1 with a step more) say nothing of the
  // waits; nor does a parameter server's run, whose wait is for the servers and has no bucket.
  edit(dir / "worker-1.json", [](nlohmann::json& j) {
    for (auto& epoch : j["epochs"]) {
      epoch["comm_split"]["wait_s"] = 0.0;
      epoch["step_compute_s"].push_back(1e-3);
    }
  });
  EXPECT_FALSE(load_fit_run(dir).waits_from_compute);
  for (int rank = 0; rank < 2; ++rank) {
    edit(dir / fmt::format("worker-{}.json", rank), [&](nlohmann::json& j) {
      for (auto& epoch : j["epochs"]) {
        epoch["step_compute_s"] = computes[static_cast<size_t>(rank)];
        epoch["comm_timings"] = nlohmann::json::array({{{"what", "push"}, {"index", -1}, {"bytes", 4096},
                                                        {"ready_s", 0.005}, {"start_s", 0.005}, {"end_s", 0.015},
                                                        {"steps", 3}}});
      }
    });
  }
  EXPECT_FALSE(load_fit_run(dir).waits_from_compute);
}

}  // namespace
}  // namespace dtbench
