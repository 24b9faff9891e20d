// The verdict of the kit's "device marks overhead" check (scripts/device_marks_verdict.py): the
// median steps with CUDA-event marks against those with a wait per phase. It passes runs whose
// settings agree, and fails marks slower than the threshold, rounds of one setting too far apart
// to tell, and a file with runs of one setting or none.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
const fs::path kScript = fs::path(DTBENCH_CONFIGS_DIR).parent_path() / "scripts" / "device_marks_verdict.py";

class MarksVerdict : public testing::TempDirTest {
 protected:
  // The script over these runs' medians (model, marks, round, ms), as the check writes them.
  testing::Outcome verdict(const std::vector<std::tuple<std::string, bool, int, double>>& runs,
                           const std::string& flags = "") {
    const fs::path file = root_ / "device_marks.txt";
    std::ofstream out(file);
    for (const auto& [model, marks, round, ms] : runs) {
      out << fmt::format("{:<10} device_marks={:<5} round {}: median step {:8.3f} ms, {:9.1f} images/s\n", model,
                         marks ? "true" : "false", round, ms, 64e3 / ms);
    }
    out.close();
    return testing::shell("/usr/bin/python3 " + kScript.string() + " --threshold-pct 5 " + flags + " " + file.string());
  }
};

TEST_F(MarksVerdict, PassesWhenTheMarksCostNothingMeasurable) {
  const auto r = verdict({{"lenet5", true, 1, 0.850}, {"lenet5", false, 1, 0.870}, {"lenet5", false, 2, 0.866},
                          {"lenet5", true, 2, 0.842}, {"resnet18", true, 1, 10.2}, {"resnet18", false, 1, 10.1}});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("lenet5: median step 0.846 ms with marks, 0.868 ms waiting per phase"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("resnet18:"), std::string::npos) << r.output;
}

TEST_F(MarksVerdict, FailsMarksSlowerThanTheThreshold) {
  const auto r = verdict({{"lenet5", true, 1, 0.95}, {"lenet5", false, 1, 0.85}, {"lenet5", false, 2, 0.86},
                          {"lenet5", true, 2, 0.94}});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("FAIL"), std::string::npos) << r.output;
}

TEST_F(MarksVerdict, FailsRoundsTooFarApartToTell) {
  // Equal medians, but one setting's two rounds differ by 20 %: as the images/s of the old check did.
  const auto r = verdict({{"lenet5", true, 1, 0.85}, {"lenet5", false, 1, 0.85}, {"lenet5", false, 2, 1.02},
                          {"lenet5", true, 2, 0.85}});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("within 20.0%"), std::string::npos) << r.output;
}

TEST_F(MarksVerdict, FailsWithoutBothSettings) {
  EXPECT_EQ(verdict({{"lenet5", true, 1, 0.85}}).exit_code, 1);
  EXPECT_EQ(verdict({}).exit_code, 1);
}

// The kit's rehearsal on a shared CPU: the figures are printed, not judged (a busy neighbour is no
// verdict on CUDA-event marks), but runs of only one setting still fail.
TEST_F(MarksVerdict, ARehearsalPrintsTheFiguresWithoutJudgingThem) {
  const auto noisy = verdict({{"lenet5", true, 1, 9.5}, {"lenet5", false, 1, 0.85}, {"lenet5", false, 2, 4.2},
                              {"lenet5", true, 2, 0.94}},
                             "--rehearsal");
  EXPECT_EQ(noisy.exit_code, 0) << noisy.output;
  EXPECT_NE(noisy.output.find("not judged (rehearsal)"), std::string::npos) << noisy.output;
  EXPECT_EQ(verdict({{"lenet5", true, 1, 0.85}}, "--rehearsal").exit_code, 1);
}

}  // namespace
}  // namespace dtbench
