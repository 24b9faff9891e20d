// The command line itself: a mistyped command is named, --version answers, and log lines carry no
// colour codes where no person reads them at a terminal (under mpirun, a rank's stdout is a
// pseudo-terminal although it ends up in a log file).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using testing::dtbench;
using testing::Outcome;

TEST(CliMain, AnUnknownCommandIsNamedWithTheCommandsThereAre) {
  const Outcome r = dtbench("trian --set steps=1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown command 'trian'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("train"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sweep"), std::string::npos) << r.output;
}

// A number out of its range is named with what was expected, not CLI11's range out to the largest
// double ("Value 0 not in range 0.000000 to 1797...", which named 0 where it meant above 0); one
// that is in range passes the check.
TEST(CliMain, ANumberOutOfRangeIsNamedWithWhatWasExpected) {
  const Outcome zero = dtbench("bench step --model lenet5 --batch 0");
  EXPECT_NE(zero.exit_code, 0) << zero.output;
  EXPECT_NE(zero.output.find("--batch: expected a number above 0, got 0"), std::string::npos) << zero.output;
  EXPECT_EQ(zero.output.find("0.000000"), std::string::npos) << zero.output;
  const Outcome negative = dtbench("bench allreduce --sizes 4B --iters -3");
  EXPECT_NE(negative.exit_code, 0) << negative.output;
  EXPECT_NE(negative.output.find("--iters: expected 0 or more, got -3"), std::string::npos) << negative.output;
  const Outcome fine = dtbench("bench allreduce --sizes 4B --iters 0 --warmup 0");
  EXPECT_EQ(fine.exit_code, 0) << fine.output;
}

TEST(CliMain, VersionNamesTheReleaseAndTheCommit) {
  const Outcome r = dtbench("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("dtbench 0.", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("(commit "), std::string::npos) << r.output;
}

TEST(CliMain, AllreduceBenchOnOneRankSaysItMeasuredNothing) {
  const Outcome r = dtbench("bench allreduce --sizes 4B --iters 1 --warmup 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("on one rank measures nothing that crosses a link"), std::string::npos) << r.output;
}

// Under a CPU quota of less than a core a rank's waits sleep instead of spinning (a host of the
// emulated cluster is told its quota by its launcher); the bench says which it does.
TEST(CliMain, AllreduceBenchSaysItsWaitsSleepUnderAQuotaOfLessThanACore) {
  const std::string bench = "bench allreduce --sizes 4KiB --iters 1 --warmup 0";
  const Outcome half = testing::shell("DTBENCH_CPU_QUOTA_CORES=0.5 " + testing::dtbench_binary() + " " + bench);
  EXPECT_EQ(half.exit_code, 0) << half.output;
  EXPECT_NE(half.output.find("# waits sleep after a few tries (CPU quota 0.5 core"), std::string::npos) << half.output;
  const Outcome two = testing::shell("DTBENCH_CPU_QUOTA_CORES=2 " + testing::dtbench_binary() + " " + bench);
  EXPECT_EQ(two.exit_code, 0) << two.output;
  EXPECT_EQ(two.output.find("# waits sleep"), std::string::npos) << two.output;
  const Outcome bad = testing::shell("DTBENCH_CPU_QUOTA_CORES=half " + testing::dtbench_binary() + " " + bench);
  EXPECT_NE(bad.exit_code, 0) << bad.output;
  EXPECT_NE(bad.output.find("DTBENCH_CPU_QUOTA_CORES is 'half': expected a positive number"), std::string::npos)
      << bad.output;
}

TEST(CliMain, ModelsSkipsTheModelsThatCannotTakeTheInputSayingSo) {
  const Outcome r = dtbench("models --input 1x8x8");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("skipped: model lenet5 cannot take input (1, 8, 8)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("resnet18   1x8x8            11172810"), std::string::npos) << r.output;
}

TEST(CliMain, WorldOutsideMpirunWithoutParameterServersWarnsItTrainsOneWorker) {
  const Outcome r = dtbench("train --world 2 --set steps=1 --set model=mlp --set dataset.path=/nonexistent");
  EXPECT_NE(r.output.find("--world 2 outside mpirun with transport 'none': this process trains alone"),
            std::string::npos) << r.output;
}

TEST(CliMain, ATargetAccuracyThatCouldBeAFractionIsRefused) {
  const Outcome r = dtbench("report /nonexistent-run --target-accuracy 0.9");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--target-accuracy 0.9: ambiguous"), std::string::npos) << r.output;
}

class CliMainUnderMpirun : public testing::MpirunTest {};

TEST_F(CliMainUnderMpirun, LogLinesCarryNoColourCodes) {
  const Outcome r = testing::shell(testing::mpirun(1) + " train --config /nonexistent/blueprint.yaml");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("[error]"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("\x1b["), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dtbench
