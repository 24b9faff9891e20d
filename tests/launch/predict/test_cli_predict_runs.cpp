// dtbench predict --fit RUN_DIR...: what a user meets with bad runs to fit on — each error names
// the file or the runs, and what was expected.
#include <gtest/gtest.h>

#include <fstream>

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

TEST_F(CliPredictRuns, ARunDirBesideTheFitRunsIsRefused) {
  const Outcome r = predict((root_ / "a").string() + " " + runs());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("would be unused"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dtbench
