// Training on a GPU end to end: a short LeNet-5 run on the device against the same run on the CPU,
// two ranks averaging gradients with `nccl` against `ring` on the CPU, and `bench allreduce` of
// nccl and the staged ring on device buffers checked element by element. Skipped, saying why,
// where no GPU can be used.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using testing::dtbench;
using testing::Outcome;

class GpuTraining : public testing::MpirunTest {
 protected:
  void SetUp() override {
    MpirunTest::SetUp();
    const Outcome probe = dtbench("bench step --device cuda --model mlp --batch 2 --steps 1 --warmup 0");
    if (probe.exit_code != 0) GTEST_SKIP() << "no GPU to run on: " << probe.output;
  }

  // The report of one run of `command` writing under root/<name>.
  nlohmann::json run(const std::string& command, const std::string& name) {
    const fs::path runs = root_ / name;
    const Outcome r = testing::shell(command + " --set output=" + runs.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return testing::read_json(testing::only_child(runs) / "report.json");
  }
};

TEST_F(GpuTraining, LenetOnTheDeviceReachesTheCpusAccuracy) {
  const fs::path data = synth("idx", 2048, 512);
  const std::string train = std::string(DTBENCH_BINARY) + " train --set model=lenet5 --set dataset.path=" +
                            data.string() + " --set epochs=2 --set batch=32";
  const auto cpu = run(train + " --set device=cpu", "cpu");
  const auto gpu = run(train + " --set device=cuda", "cuda");
  EXPECT_NE(gpu["model"]["device"].get<std::string>().find("cuda:0"), std::string::npos);
  const double cpu_accuracy = cpu["epochs"][1]["test_accuracy"].get<double>();
  const double gpu_accuracy = gpu["epochs"][1]["test_accuracy"].get<double>();
  EXPECT_NEAR(gpu_accuracy, cpu_accuracy, 0.02) << "CPU " << cpu_accuracy << ", GPU " << gpu_accuracy;
}

TEST_F(GpuTraining, TwoRanksWithNcclEndLikeTheRingOnTheCpu) {
  const fs::path data = synth("idx", 1024, 256);
  const std::string train = testing::mpirun(2) + " train --set model=mlp --set dataset.path=" + data.string() +
                            " --set steps=10 --set batch=32 --set threads=1";
  const auto ring = run(train + " --set device=cpu --set transport=ring", "ring");
  const auto nccl = run(train + " --set device=cuda --set transport=nccl", "nccl");
  EXPECT_EQ(nccl["status"], "complete");
  const double ring_loss = ring["epochs"][0]["train_loss"].get<double>();
  const double nccl_loss = nccl["epochs"][0]["train_loss"].get<double>();
  EXPECT_NEAR(nccl_loss, ring_loss, 1e-2 * ring_loss) << "ring " << ring_loss << ", nccl " << nccl_loss;
}

// The bench's untimed runs compare every element with the closed-form sum; a wrong one fails it.
TEST_F(GpuTraining, BenchAllreduceOfNcclAndTheStagedRingChecksEveryElement) {
  const std::string json = (root_ / "allreduce.json").string();
  const Outcome r = testing::shell(testing::mpirun(2) + " bench allreduce --sizes 4B:1MiB --iters 3 --transport " +
                                   "nccl,ring --device cuda --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto report = testing::read_json(json);
  EXPECT_TRUE(report["staged_through_host"].get<bool>());
  ASSERT_EQ(report["rows"].size(), 19u);
  for (const auto& row : report["rows"]) {
    EXPECT_EQ(row["nccl"]["wrong_elements"], 0) << row.dump();
    EXPECT_EQ(row["ring"]["wrong_elements"], 0) << row.dump();
    EXPECT_GT(row["nccl"]["algbw_gbps"].get<double>(), 0.0) << row.dump();
  }
}

}  // namespace
}  // namespace dtbench
