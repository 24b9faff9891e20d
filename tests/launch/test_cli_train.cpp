// The dtbench binary end to end: synthetic data in a real format, a short training run, the run
// directory it leaves, and the errors and interruptions a user can cause.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/cli_helpers.h"

extern char** environ;

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::dtbench;
using testing::Outcome;
using testing::read_json;

fs::path only_run_directory(const fs::path& runs) {
  const fs::path dir = testing::only_child(runs);
  EXPECT_FALSE(dir.empty()) << "expected one run directory in " << runs;
  return dir;
}

class CliTrain : public testing::TempDirTest {};

TEST_F(CliTrain, TrainsOnSyntheticIdxAndWritesACompleteReport) {
  const fs::path data = synth("idx", 1024, 256);
  const fs::path runs = root_ / "runs";
  const Outcome r = dtbench("train --set model=mlp --set dataset.path=" + data.string() + " --set output=" +
                       runs.string() + " --set epochs=2 --set batch=32 --set threads=1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Per-phase breakdown"), std::string::npos) << r.output;

  const fs::path dir = only_run_directory(runs);
  EXPECT_TRUE(fs::exists(dir / "blueprint.yaml"));
  const auto report = read_json(dir / "report.json");
  EXPECT_EQ(report["status"], "complete");
  EXPECT_TRUE(report["data"]["synthetic"].get<bool>());
  EXPECT_EQ(report["model"]["parameters"], 109386);
  EXPECT_FALSE(report["provenance"]["blas_core"].get<std::string>().empty());
  EXPECT_EQ(report["blueprint"]["epochs"], 2);
  ASSERT_EQ(report["epochs"].size(), 2u);
  for (const auto& epoch : report["epochs"]) {
    EXPECT_EQ(epoch["steps"], 1024 / 32);
    // The phases of every step sum to the step, so their sums do too.
    double phase_sum = 0.0;
    for (const char* phase : {"load", "forward", "backward", "comm", "update", "other"}) {
      phase_sum += epoch["phases"][phase]["sum_s"].get<double>();
    }
    EXPECT_NEAR(phase_sum, epoch["phases"]["step"]["sum_s"].get<double>(), 1e-9);
    EXPECT_GT(epoch["phases"]["forward"]["sum_s"].get<double>(), 0.0);
    EXPECT_EQ(epoch["test_samples"], 256);
  }
  // The synthetic classes are learnable: far above the 10% of chance after two epochs.
  EXPECT_GT(report["epochs"][1]["test_accuracy"].get<double>(), 0.5);
  EXPECT_LT(report["summary"]["profiler_overhead_estimate"].get<double>(), 0.01);
}

// Every stretch of the training's timeline is measured on its own — the steps, the gaps between
// them (trace writing here), the evaluations — and together they are the training wall time.
TEST_F(CliTrain, WallTimeIsStepsPlusBetweenStepsPlusEvaluation) {
  const fs::path data = synth("idx", 512, 128);
  const fs::path runs = root_ / "runs";
  const auto started = std::chrono::steady_clock::now();
  const Outcome r = dtbench("train --set model=mlp --set dataset.path=" + data.string() + " --set output=" +
                            runs.string() + " --set epochs=2 --set batch=32 --set threads=1" +
                            " --set profile.trace_steps=100");
  const double process_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("between steps"), std::string::npos) << r.output;
  const auto report = read_json(only_run_directory(runs) / "report.json");
  double spans = 0.0;
  for (const auto& epoch : report["epochs"]) {
    const double steps = epoch["train_seconds"].get<double>(), between = epoch["between_seconds"].get<double>();
    const double evaluation = epoch["evaluation_seconds"].get<double>(), span = epoch["span_seconds"].get<double>();
    EXPECT_GT(between, 0.0);
    EXPECT_GT(evaluation, 0.0);
    EXPECT_NEAR(steps + between + evaluation, span, 1e-9);
    // The system-clock times bound the same stretches: the steps, then (after a gap) evaluation.
    EXPECT_LE(epoch["start_unix_s"].get<double>() + steps, epoch["steps_end_unix_s"].get<double>() + 1e-6);
    const double after_steps = epoch["end_unix_s"].get<double>() - epoch["steps_end_unix_s"].get<double>();
    EXPECT_GE(after_steps, evaluation - 1e-6);
    EXPECT_LE(after_steps, evaluation + between + 1e-6);
    spans += span;
  }
  EXPECT_NEAR(spans, report["wall_seconds"].get<double>(), 1e-9);
  const auto& split = report["summary"]["wall_split"];
  EXPECT_NEAR(split["steps_s"].get<double>() + split["between_steps_s"].get<double>() +
                  split["evaluation_s"].get<double>(), report["wall_seconds"].get<double>(), 1e-9);
  const double startup = report["startup_seconds"].get<double>();
  EXPECT_GT(startup, 0.0);
  EXPECT_LT(startup + report["wall_seconds"].get<double>(), process_seconds);
}

// A shell that waited before it exec'd dtbench (the README's first command under `bash -c`, after
// a 13-minute build) hands dtbench its own start time: start-up is still counted from dtbench's.
TEST_F(CliTrain, StartUpIsCountedFromDtbenchNotFromTheShellThatExecdIt) {
  const fs::path data = synth("idx", 256, 64);
  const fs::path runs = root_ / "runs";
  const Outcome r = testing::shell("sh -c 'sleep 4; exec " + std::string(DTBENCH_BINARY) + " train --set model=mlp "
                          "--set dataset.path=" + data.string() + " --set output=" + runs.string() +
                          " --set epochs=1 --set steps=3 --set threads=1'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double startup = read_json(only_run_directory(runs) / "report.json")["startup_seconds"].get<double>();
  EXPECT_GT(startup, 0.0);
  EXPECT_LT(startup, 3.0) << "the shell's 4 s of sleep counted as dtbench's start-up";
}

// eval.max_samples stops evaluation before the batch that would pass it; --local-workers shares
// the cores among the workers of this host for the default BLAS threads.
TEST_F(CliTrain, EvaluationIsBoundedAndThreadsAreSharedAmongLocalWorkers) {
  const fs::path data = synth("idx", 256, 256);
  const fs::path runs = root_ / "runs";
  const Outcome r = dtbench("train --set model=mlp --set dataset.path=" + data.string() + " --set output=" +
                            runs.string() + " --set batch=32 --set steps=2 --set eval.max_samples=100" +
                            " --local-workers 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto report = read_json(only_run_directory(runs) / "report.json");
  EXPECT_EQ(report["epochs"][0]["test_samples"], 96);  // three batches of 32; a fourth would pass 100
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(report["provenance"]["blas_threads"], std::max(1, cores / 2));
}

TEST_F(CliTrain, TrainsLenetOnUncachedAugmentedCifar) {
  const fs::path data = synth("cifar10", 256, 64);
  const Outcome r = dtbench("train --set model=lenet5 --set dataset.format=cifar10 --set dataset.path=" +
                       data.string() + " --set dataset.cache=false --set dataset.augment=true --set output=" +
                       (root_ / "runs").string() + " --set steps=5 --set batch=16 --set optimizer.name=adam" +
                       " --set optimizer.lr=0.001");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto report = read_json(only_run_directory(root_ / "runs") / "report.json");
  EXPECT_EQ(report["epochs"][0]["steps"], 5);
  EXPECT_EQ(report["model"]["parameters"], 62006);
  EXPECT_FALSE(report["data"]["cache"].get<bool>());
}

TEST_F(CliTrain, TimesOperatorsWhenAsked) {
  const fs::path data = synth("cifar10", 128, 32);
  const Outcome r = dtbench("train --set model=lenet5 --set dataset.format=cifar10 --set dataset.path=" +
                            data.string() + " --set output=" + (root_ / "runs").string() +
                            " --set steps=4 --set batch=16 --set profile.operators=true");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("Per operator"), std::string::npos) << r.output;
  const auto report = read_json(only_run_directory(root_ / "runs") / "report.json");
  const auto& operators = report["epochs"][0]["operators"];
  for (const char* kind : {"conv2d", "linear", "maxpool2d", "relu"}) {
    ASSERT_TRUE(operators.contains(kind)) << operators.dump();
    EXPECT_GT(operators[kind]["forward_s"].get<double>(), 0.0);
    EXPECT_GT(operators[kind]["backward_s"].get<double>(), 0.0);
  }
  EXPECT_EQ(operators["conv2d"]["forward_calls"], 2 * 4);  // two convolutions, four steps
  // The operators happen inside forward and backward, so they cannot take longer than those.
  double inside = 0.0;
  for (const auto& [kind, t] : operators.items()) inside += t["forward_s"].get<double>() + t["backward_s"].get<double>();
  const auto& phases = report["epochs"][0]["phases"];
  EXPECT_LE(inside, phases["forward"]["sum_s"].get<double>() + phases["backward"]["sum_s"].get<double>());
}

TEST_F(CliTrain, BadInputIsAClearErrorWithExitCode2) {
  Outcome r = dtbench("train --set dataset.path=" + (root_ / "absent").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find((root_ / "absent").string()), std::string::npos) << r.output;

  r = dtbench("train --set optimizer.lrate=0.1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("optimizer.lrate"), std::string::npos) << r.output;

  r = dtbench("train --config " + (root_ / "missing.yaml").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("missing.yaml"), std::string::npos) << r.output;

  const fs::path data = synth("cifar10", 64, 16);
  r = dtbench("train --set model=mlp --set dataset.format=cifar10 --set dataset.path=" + data.string() +
          " --set output=" + (root_ / "runs").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("mlp"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3, 32, 32"), std::string::npos) << r.output;

  r = dtbench("train --set transport=ps-sync");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("ps.servers"), std::string::npos) << r.output;

  r = dtbench("train --set transport=carrier-pigeon");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("none, ring, mpi, nccl, ps-sync, ps-async"), std::string::npos) << r.output;
}

// lr 1e30 blows the weights up after the first step: the loss turns non-finite, and the run ends
// there as failed, saying so, instead of training on NaN to a "complete" run at chance accuracy.
TEST_F(CliTrain, ADivergingRunFailsAtTheFirstNonFiniteLoss) {
  const fs::path data = synth("idx", 256, 32);
  const Outcome r = dtbench("train --set model=mlp --set dataset.path=" + data.string() + " --set output=" +
                            (root_ / "runs").string() + " --set optimizer.lr=1e30 --set steps=6 --set batch=32");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("diverged: loss is "), std::string::npos) << r.output;
  const auto report = read_json(only_run_directory(root_ / "runs") / "report.json");
  EXPECT_EQ(report["status"], "failed");
  const std::string error = report["error"];
  EXPECT_NE(error.find("diverged: loss is "), std::string::npos) << error;
  EXPECT_NE(error.find(" at step "), std::string::npos) << error;
  EXPECT_NE(error.find("(epoch 1)"), std::string::npos) << error;
}

TEST_F(CliTrain, InterruptedRunKeepsAReportMarkedIncomplete) {
  const fs::path data = synth("idx", 512, 64);
  const fs::path runs = root_ / "runs";
  const std::string binary = DTBENCH_BINARY;
  const std::string path_arg = "dataset.path=" + data.string();
  const std::string output_arg = "output=" + runs.string();
  std::vector<std::string> args = {binary, "train", "--set", "model=mlp", "--set", path_arg, "--set",
                                   output_arg, "--set", "epochs=100000", "--set", "batch=64"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, binary.c_str(), nullptr, nullptr, argv.data(), environ), 0);

  // Wait until at least one epoch is on disk, then interrupt.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  fs::path report_path;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(runs) && !fs::is_empty(runs)) {
      report_path = only_run_directory(runs) / "report.json";
      if (fs::exists(report_path) && !read_json(report_path)["epochs"].empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  const auto report = read_json(report_path);
  EXPECT_EQ(report["status"], "failed");
  EXPECT_FALSE(report["complete"].get<bool>());
  EXPECT_GE(report["epochs"].size(), 1u);
  EXPECT_NE(report["error"].get<std::string>().find("signal 15"), std::string::npos) << report["error"];
}

}  // namespace
}  // namespace dtbench
