// `device:` from the command line: where a GPU cannot be used (no CUDA build, or no device),
// `device: cuda`, `bench step --device cuda` and `bench allreduce --transport nccl / --device cuda`
// end at once with exit code 2 and the reason, before any data is read; an unknown device is named
// with the choices.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/cuda/register.h"
#include "support/cli_helpers.h"

namespace dtbench::testing {
namespace {

bool gpu_usable() {
  const Outcome probe = dtbench("bench step --device cuda --model mlp --batch 2 --steps 1 --warmup 0");
  return probe.exit_code == 0;
}

// The reason this machine gives for refusing cuda, as the CLI should print it.
std::string expected_reason() {
  return cuda_backend_built() ? "device 'cuda': no" : "device 'cuda': this dtbench was built without it";
}

TEST(CliDevice, TrainOnCudaWithoutAGpuIsRefusedBeforeReadingData) {
  if (gpu_usable()) GTEST_SKIP() << "a GPU is present here";
  const Outcome r = dtbench("train --set device=cuda --set dataset.path=/nonexistent/data --set output=/nonexistent");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(expected_reason()), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("/nonexistent/data"), std::string::npos) << "the data was opened first:\n" << r.output;
}

TEST(CliDevice, BenchStepOnCudaWithoutAGpuIsRefused) {
  if (gpu_usable()) GTEST_SKIP() << "a GPU is present here";
  const Outcome r = dtbench("bench step --device cuda --model mlp --batch 2 --steps 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(expected_reason()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("use device: cpu"), std::string::npos) << r.output;
}

TEST(CliDevice, BenchAllreduceOnAGpuWithoutOneIsRefusedNamingTheFlag) {
  if (gpu_usable()) GTEST_SKIP() << "a GPU is present here";
  const Outcome nccl = dtbench("bench allreduce --sizes 4B --iters 1 --transport ring,nccl");
  EXPECT_EQ(nccl.exit_code, 2) << nccl.output;
  EXPECT_NE(nccl.output.find("bench allreduce --transport nccl: " + expected_reason()), std::string::npos)
      << nccl.output;
  const Outcome staged = dtbench("bench allreduce --sizes 4B --iters 1 --device cuda");
  EXPECT_EQ(staged.exit_code, 2) << staged.output;
  EXPECT_NE(staged.output.find("bench allreduce --device cuda: " + expected_reason()), std::string::npos)
      << staged.output;
  const Outcome unknown = dtbench("bench allreduce --sizes 4B --transport gloo");
  EXPECT_NE(unknown.exit_code, 0) << unknown.output;
  EXPECT_NE(unknown.output.find("gloo not in {ring,mpi,nccl}"), std::string::npos) << unknown.output;
}

// precision tf32 needs a GPU: on the cpu, train and bench step end at once naming the key or flag,
// the value and the device; bench step says the precision it ran in.
TEST(CliDevice, Tf32OnTheCpuIsRefusedAndBenchStepNamesThePrecision) {
  const Outcome train = dtbench("train --set precision=tf32 --set dataset.path=/nonexistent/data");
  EXPECT_EQ(train.exit_code, 2) << train.output;
  EXPECT_NE(train.output.find("key 'precision': 'tf32' is not available on device 'cpu'"), std::string::npos)
      << train.output;
  EXPECT_EQ(train.output.find("/nonexistent/data"), std::string::npos) << "the data was opened first:\n" << train.output;
  const Outcome bench = dtbench("bench step --precision tf32 --model mlp --batch 2 --steps 1 --warmup 0");
  EXPECT_EQ(bench.exit_code, 2) << bench.output;
  EXPECT_NE(bench.output.find("--precision: 'tf32' is not available on device 'cpu'"), std::string::npos)
      << bench.output;
  const Outcome unknown = dtbench("bench step --precision bf17 --model mlp --batch 2 --steps 1 --warmup 0");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("--precision: unknown precision 'bf17'; expected one of fp32, tf32"), std::string::npos)
      << unknown.output;
  const Outcome fp32 = dtbench("bench step --precision fp32 --model mlp --batch 2 --steps 1 --warmup 0");
  EXPECT_EQ(fp32.exit_code, 0) << fp32.output;
  EXPECT_NE(fp32.output.find("threads, precision fp32, convolutions measured;"), std::string::npos) << fp32.output;
}

TEST(CliDevice, AnUnknownDeviceIsNamedWithTheChoices) {
  const Outcome train = dtbench("train --set device=gpu0");
  EXPECT_EQ(train.exit_code, 2) << train.output;
  EXPECT_NE(train.output.find("key 'device': 'gpu0' is not one of cpu, cuda"), std::string::npos) << train.output;
  const Outcome bench = dtbench("bench step --device tpu --steps 1");
  EXPECT_EQ(bench.exit_code, 2) << bench.output;
  EXPECT_NE(bench.output.find("--device: unknown device 'tpu'; expected one of cpu, cuda"), std::string::npos)
      << bench.output;
}

class CliNccl : public TempDirTest {};

// nccl reduces on the GPU: on the CPU it is refused, saying what to use instead (or, without the
// CUDA build, that it is not built).
TEST_F(CliNccl, NcclWithDeviceCpuIsRefusedNamingTheAlternatives) {
  const std::filesystem::path data = synth("idx", 64, 32);
  const Outcome r = dtbench("train --set transport=nccl --set model=mlp --set steps=1 --set dataset.path=" +
                            data.string() + " --set output=" + (root_ / "runs").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string expected = cuda_backend_built()
                                   ? "transport nccl reduces gradients on the GPU: it needs device: cuda"
                                   : "transport 'nccl' is not built into this dtbench";
  EXPECT_NE(r.output.find(expected), std::string::npos) << r.output;
}

TEST(CliDevice, BenchStepOnTheCpuIsUnchanged) {
  const Outcome r = dtbench("bench step --device cpu --model mlp --batch 8 --steps 2 --warmup 0");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("device "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("mlp"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dtbench::testing
