// Training on a GPU end to end: a short LeNet-5 run on the device against the same run on the CPU,
// two ranks averaging gradients with `nccl` against `ring` on the CPU, and `bench allreduce` of
// nccl and the staged ring on device buffers checked element by element. Skipped, saying why,
// where no GPU can be used.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>

#include "core/cuda/register.h"
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
  const std::string train = testing::dtbench_binary() + " train --set model=lenet5 --set dataset.path=" +
                            data.string() + " --set epochs=2 --set batch=32";
  const auto cpu = run(train + " --set device=cpu", "cpu");
  const auto gpu = run(train + " --set device=cuda", "cuda");
  EXPECT_NE(gpu["model"]["device"].get<std::string>().find("cuda:0"), std::string::npos);
  const double cpu_accuracy = cpu["epochs"][1]["test_accuracy"].get<double>();
  const double gpu_accuracy = gpu["epochs"][1]["test_accuracy"].get<double>();
  EXPECT_NEAR(gpu_accuracy, cpu_accuracy, 0.02) << "CPU " << cpu_accuracy << ", GPU " << gpu_accuracy;
}

// NCCL needs a GPU per rank: two ranks where there are two GPUs, one where there is one (its
// allreduce then leaves the gradients as they are, and the run must still end like the CPU's).
TEST_F(GpuTraining, RanksWithNcclEndLikeTheRingOnTheCpu) {
  const fs::path data = synth("idx", 1024, 256);
  const std::string train = testing::mpirun(std::min(2, cuda_device_count())) +
                            " train --set model=mlp --set dataset.path=" + data.string() +
                            " --set steps=10 --set batch=32 --set threads=1";
  const auto ring = run(train + " --set device=cpu --set transport=ring", "ring");
  const auto nccl = run(train + " --set device=cuda --set transport=nccl", "nccl");
  EXPECT_EQ(nccl["status"], "complete");
  const double ring_loss = ring["epochs"][0]["train_loss"].get<double>();
  const double nccl_loss = nccl["epochs"][0]["train_loss"].get<double>();
  EXPECT_NEAR(nccl_loss, ring_loss, 1e-2 * ring_loss) << "ring " << ring_loss << ", nccl " << nccl_loss;
}

// The bench's untimed runs compare every element with the closed-form sum; a wrong one fails it.
// The staged ring at two ranks (they may share a GPU: it reduces on the host), nccl at as many
// ranks as GPUs, up to two.
TEST_F(GpuTraining, BenchAllreduceOfNcclAndTheStagedRingChecksEveryElement) {
  const auto bench = [this](int ranks, const std::string& transport) {
    const std::string json = (root_ / (transport + ".json")).string();
    const Outcome r = testing::shell(testing::mpirun(ranks) + " bench allreduce --sizes 4B:1MiB --iters 3 " +
                                     "--transport " + transport + " --device cuda --json " + json);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return r.exit_code == 0 ? testing::read_json(json) : nlohmann::json();
  };
  const auto ring = bench(2, "ring");
  EXPECT_TRUE(ring.value("staged_through_host", false)) << ring.dump();
  const auto nccl = bench(std::min(2, cuda_device_count()), "nccl");
  for (const auto& [report, transport] : {std::pair{ring, "ring"}, std::pair{nccl, "nccl"}}) {
    ASSERT_EQ(report["rows"].size(), 19u) << transport;
    for (const auto& row : report["rows"]) {
      EXPECT_EQ(row[transport]["wrong_elements"], 0) << row.dump();
      EXPECT_GT(row[transport]["algbw_gbps"].get<double>(), 0.0) << row.dump();
    }
  }
}

// Two ranks on one GPU: NCCL would refuse them after its own set-up with "invalid usage"; dtbench
// says which ranks share which GPU, and what to do, before it starts.
TEST_F(GpuTraining, TwoRanksOnOneGpuAreRefusedByNcclNamingTheSharedGpu) {
  if (cuda_device_count() != 1) GTEST_SKIP() << "needs exactly one GPU, found " << cuda_device_count();
  const Outcome r = testing::shell(testing::mpirun(2) +
                                   " bench allreduce --sizes 1MiB --iters 1 --transport nccl --device cuda");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ranks 0 and 1 both use GPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("transport ring"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dtbench
