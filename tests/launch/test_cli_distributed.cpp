// Data-parallel training under mpirun, end to end: the transports are interchangeable (ring and
// MPI_Allreduce with 4 ranks × batch 16 end with the weights of 1 rank × batch 64 on the same
// samples), and a rank that dies or stalls ends the whole run with a clear error in bounded time.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/cli_helpers.h"

extern char** environ;

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::read_weights;
using Clock = std::chrono::steady_clock;

using testing::mpirun;
using testing::only_child;
using testing::Outcome;
using testing::read_json;
using testing::shell;

class Distributed : public testing::MpirunTest {
 protected:
  void SetUp() override {
    MpirunTest::SetUp();
    synth("cifar10", 1600, 64, "data");
  }

  std::string common(const std::string& output) const {
    return " train --set model=lenet5 --set dataset.format=cifar10 --set dataset.path=" + (root_ / "data").string() +
           " --set output=" + (root_ / output).string() + " --set threads=1 --set seed=11";
  }
};

TEST_F(Distributed, RingAndMpiWithFourRanksMatchOneRankWithTheGlobalBatch) {
  const std::string steps = " --set steps=20 --set save_weights=true --set optimizer.lr=0.05 --set optimizer.momentum=0.9";
  const Outcome single = shell(std::string(DTBENCH_BINARY) + common("single") + steps + " --set batch=64");
  ASSERT_EQ(single.exit_code, 0) << single.output;
  const std::vector<float> expected = read_weights(only_child(root_ / "single") / "weights.bin");
  ASSERT_FALSE(expected.empty());

  for (const std::string transport : {"ring", "mpi"}) {
    for (const std::string overlap : {"false", "true"}) {
      const std::string output = transport + "-" + overlap;
      const Outcome run = shell(mpirun(4) + common(output) + steps + " --set batch=16 --set transport=" + transport +
                            " --set comm.overlap=" + overlap + " --set comm.bucket_mb=0.05");
      ASSERT_EQ(run.exit_code, 0) << run.output;
      const fs::path dir = only_child(root_ / output);
      const std::vector<float> got = read_weights(dir / "weights.bin");
      ASSERT_EQ(got.size(), expected.size());
      double worst = 0.0, norm = 0.0;
      for (size_t i = 0; i < got.size(); ++i) {
        worst = std::max(worst, std::abs(double(got[i]) - expected[i]));
        norm = std::max(norm, std::abs(double(expected[i])));
      }
      // Sums taken in another order differ in the last bits; 20 steps keep that far below 1e-4.
      EXPECT_LT(worst, 1e-4 * std::max(norm, 1.0)) << transport << " overlap " << overlap;
      const auto report = read_json(dir / "report.json");
      EXPECT_EQ(report["world"], 4);
      EXPECT_EQ(report["status"], "complete");
      EXPECT_TRUE(report["transport_summary"]["weights_identical"].get<bool>());
      EXPECT_EQ(report["workers"]["per_worker"].size(), 4u);
      EXPECT_EQ(report["transport_summary"]["overlap"].get<bool>(), overlap == "true");
      if (transport == "mpi") {
        // Buckets of about 0.05 MB (whole layers: 236,672 and 11,584 B) on 4 ranks: Open MPI's fixed
        // rules take Rabenseifner's from 8 KiB.
        const std::string algorithm = report["transport_summary"]["mpi_algorithm"].get<std::string>();
        EXPECT_EQ(algorithm, "rabenseifner (236672 B, 11584 B) at 4 ranks, by Open MPI's fixed rules");
      }
      for (int rank = 0; rank < 4; ++rank) EXPECT_TRUE(fs::exists(dir / ("worker-" + std::to_string(rank) + ".json")));
      const auto& comm = report["epochs"][0]["comm_split"];
      EXPECT_GT(comm["comm_total_s"].get<double>(), 0.0);
      // Wait and transfer split the total, and the exposed part lies within it, whatever the scheduler
      // did to 4 ranks on fewer cores.
      const double total = comm["comm_total_s"].get<double>();
      EXPECT_NEAR(comm["wait_s"].get<double>() + comm["transfer_s"].get<double>(), total, 1e-9 + 1e-9 * total);
      EXPECT_LE(comm["comm_s"].get<double>(), total * (1 + 1e-9));
    }
  }
}

// An algorithm forced through coll/tuned's variables (as `--mca` or the environment set them) is
// what the report names, not the fixed rules' choice.
TEST_F(Distributed, AnMpiRunNamesTheAllreduceAlgorithmForcedOnTheLibrary) {
  const Outcome run = shell("OMPI_MCA_coll_tuned_use_dynamic_rules=1 OMPI_MCA_coll_tuned_allreduce_algorithm=4 " +
                            mpirun(2) + common("forced") + " --set steps=2 --set batch=16 --set transport=mpi");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto report = read_json(only_child(root_ / "forced") / "report.json");
  EXPECT_EQ(report["transport_summary"]["mpi_algorithm"], "algorithm ring as forced (coll_tuned_allreduce_algorithm)");
}

// On one host the ring takes shared memory unless told otherwise, and ends bit for bit where the
// message ring ends (the same additions in the same order), buckets reduced during backward included.
TEST_F(Distributed, TheRingOverSharedMemoryEndsWithTheMessageRingsWeightsBitForBit) {
  const std::string settings = " --set steps=6 --set batch=16 --set save_weights=true --set transport=ring"
                               " --set comm.bucket_mb=0.05 --set comm.overlap=true --set optimizer.lr=0.05";
  std::vector<float> weights[2];
  const char* paths[2] = {"messages", "auto"};
  const char* taken[2] = {"messages", "shared memory"};
  for (int k = 0; k < 2; ++k) {
    const std::string output = std::string("path-") + paths[k];
    const Outcome run = shell(mpirun(3) + common(output) + settings + " --set comm.ring_path=" + paths[k]);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const fs::path dir = only_child(root_ / output);
    const auto report = read_json(dir / "report.json");
    EXPECT_EQ(report["transport_summary"]["ring_path"], taken[k]);
    EXPECT_TRUE(report["transport_summary"]["weights_identical"].get<bool>());
    weights[k] = read_weights(dir / "weights.bin");
  }
  ASSERT_FALSE(weights[0].empty());
  ASSERT_EQ(weights[0].size(), weights[1].size());
  EXPECT_EQ(std::memcmp(weights[0].data(), weights[1].data(), weights[0].size() * sizeof(float)), 0);
}

// The largest absolute difference between two weights files of the same model.
double max_difference(const fs::path& a, const fs::path& b) {
  const std::vector<float> x = read_weights(a), y = read_weights(b);
  EXPECT_EQ(x.size(), y.size());
  EXPECT_FALSE(x.empty());
  double worst = 0.0;
  for (size_t i = 0; i < std::min(x.size(), y.size()); ++i) worst = std::max(worst, std::abs(double(x[i]) - y[i]));
  return worst;
}

// The README's claim, as it states it: on the real Fashion-MNIST, after 20 steps of the built-in
// blueprint (LeNet-5, SGD lr 0.02, momentum 0.9), workers with ring or mpi (4 × batch 16, 2 × 32),
// and one worker with 2 BLAS threads, end within 2e-3 (largest absolute difference; the weights reach
// about 0.9) of one worker × batch 64 with 1 thread. Summing in another order changes the last
// bits; a last-bit difference that tips a near-tie (a ReLU, a max-pool) then grows: mpi's
// 1.3e-3 here appears between steps 13 and 16, from 1.2e-7.
class SameWeights : public testing::MpirunTest {};

TEST_F(SameWeights, SynchronousTransportsEndWithinTheStatedToleranceOnFashionMnist) {
  const fs::path data = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(data / "train-images-idx3-ubyte.gz")) GTEST_SKIP() << "Fashion-MNIST is not installed";
  constexpr double kStatedTolerance = 2e-3;  // README.md, "the same weights"
  const std::string common = " train --set steps=20 --set save_weights=true --set eval.max_samples=64"
                             " --set profile.trace_steps=0 --set output=";
  auto run = [&](const std::string& launcher, const std::string& name, const std::string& settings) {
    const Outcome r = shell(launcher + common + (root_ / name).string() + settings);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return only_child(root_ / name) / "weights.bin";
  };
  const fs::path one = run(DTBENCH_BINARY, "one", " --set threads=1");
  // Each difference is printed, so that the figures README.md quotes come from this test
  // (`ctest --test-dir build -R SameWeights -V`).
  auto check = [&](const std::string& what, const fs::path& weights) {
    const double difference = max_difference(one, weights);
    std::printf("largest weight difference from 1 worker x 64, 1 BLAS thread: %s %.2g\n", what.c_str(), difference);
    EXPECT_LE(difference, kStatedTolerance) << what;
  };
  check("1 worker x 64, 2 BLAS threads", run(DTBENCH_BINARY, "two-threads", " --set threads=2"));
  // mpi at 4 × 16 is the widest measured; ring at 2 × 32 keeps the test short (ring at 4 × 16 is
  // covered to 1e-4 on synthetic data above).
  check("mpi 4 x 16", run(mpirun(4), "mpi", " --set threads=1 --set batch=16 --set transport=mpi"));
  check("ring 2 x 32", run(mpirun(2), "ring", " --set threads=1 --set batch=32 --set transport=ring"));
}

// Starts mpirun in the background; returns its pid.
pid_t spawn_shell(const std::string& command) {
  std::string line = command;
  std::vector<std::string> args = {"/bin/sh", "-c", "exec " + line};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  posix_spawn(&pid, "/bin/sh", nullptr, nullptr, argv.data(), environ);
  return pid;
}

// Waits for `pid` up to `limit`; returns its exit status, or -1 if it is still running (then kills it).
int wait_for(pid_t pid, std::chrono::seconds limit, double& seconds) {
  const auto start = Clock::now();
  int status = 0;
  while (Clock::now() - start < limit) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

// The pid of `rank`, from its worker report, once the run has started.
pid_t wait_for_rank_pid(const fs::path& runs, int rank) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    const fs::path dir = only_child(runs);
    const fs::path file = dir / ("worker-" + std::to_string(rank) + ".json");
    if (!dir.empty() && fs::exists(file)) {
      try {
        const auto report = read_json(file);
        if (!report["epochs"].empty()) return report["provenance"]["pid"].get<pid_t>();
      } catch (const std::exception&) {  // being replaced; read again
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

// What a long 3-rank ring run did after `signal` reached `rank` once training was under way.
struct FaultOutcome {
  int exit_code = -1;  // -1: still running after 30 s (then killed)
  double seconds = 0;  // from the signal to the end of mpirun
  nlohmann::json report;
  std::string output;  // mpirun's and the ranks'
};

FaultOutcome signal_a_rank(const fs::path& root, const std::string& run_arguments, int rank, int signal,
                           const std::string& transport = "ring") {
  FaultOutcome outcome;
  const fs::path log = root / "mpirun.log";
  const pid_t job = spawn_shell(mpirun(3) + run_arguments + " --set epochs=100000 --set batch=8 --set transport=" +
                                transport + " > " + log.string() + " 2>&1");
  const pid_t victim = wait_for_rank_pid(root / "runs", rank);
  EXPECT_GT(victim, 0);
  if (victim <= 0) {
    kill(job, SIGKILL);
    return outcome;
  }
  kill(victim, signal);
  outcome.exit_code = wait_for(job, std::chrono::seconds(30), outcome.seconds);
  kill(victim, SIGKILL);  // a stopped rank is still there
  outcome.report = read_json(only_child(root / "runs") / "report.json");
  outcome.output = testing::read_text(log);
  return outcome;
}

// Every report but the frozen rank's says failed, with a reason holding each of `expected`.
void expect_survivors_failed(const fs::path& run, int frozen, std::initializer_list<std::string> expected,
                             const std::string& output) {
  for (int rank = 0; rank < 3; ++rank) {
    if (rank == frozen) continue;
    const std::string file = "worker-" + std::to_string(rank) + ".json";
    const nlohmann::json report = read_json(run / file);
    const std::string error = report.value("error", "");
    SCOPED_TRACE(file + ": " + error);
    EXPECT_EQ(report["status"], "failed") << output;
    for (const std::string& part : expected) EXPECT_NE(error.find(part), std::string::npos) << output;
  }
}

TEST_F(Distributed, AStalledRankEndsTheRunWithinTheTimeout) {
  const FaultOutcome outcome = signal_a_rank(root_, common("runs") + " --set comm.timeout_s=3", 1, SIGSTOP);
  EXPECT_NE(outcome.exit_code, -1) << "the run hung";
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_LT(outcome.seconds, 2 * 3 + 5);
  // Ranks 0 and 2 both wait for rank 1 (in a ring step, the exchange of arrival times, or rank 0's
  // gather of the reports). The first to time out calls the roll, which names rank 1, writes its
  // report and tells the other, which writes its own before the job is aborted: both say failed,
  // and both name rank 1 as the silent one.
  expect_survivors_failed(only_child(root_ / "runs"), 1, {"silent: rank 1 did not answer"}, outcome.output);
  EXPECT_NE(outcome.output.find("timed out after 3.0 s"), std::string::npos) << outcome.output;
}

// A rank that stops itself at start-up (the clock-offset exchange) or at the end (the weights
// checksum) ends the run within the timeout; the others' reports name it and the exchange.
FaultOutcome freeze_a_rank(const fs::path& root, const std::string& run_arguments, const std::string& where) {
  FaultOutcome outcome;
  const fs::path log = root / "mpirun.log";
  const pid_t job = spawn_shell(mpirun(3) + run_arguments + " --set steps=3 --set batch=8 --set transport=ring"
                                " --set comm.timeout_s=3 --test-freeze-rank 1 --test-freeze-at " + where + " > " +
                                log.string() + " 2>&1");
  outcome.exit_code = wait_for(job, std::chrono::seconds(60), outcome.seconds);
  outcome.output = testing::read_text(log);
  const fs::path worker = only_child(root / "runs") / "worker-1.json";
  if (!only_child(root / "runs").empty() && fs::exists(worker)) kill(read_json(worker)["provenance"]["pid"].get<pid_t>(), SIGKILL);  // if still there
  return outcome;
}

// The run ended by itself, failed, within `limit_s` seconds.
void expect_failed_within(const FaultOutcome& outcome, double limit_s) {
  EXPECT_NE(outcome.exit_code, -1) << "the run hung";
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_LT(outcome.seconds, limit_s) << outcome.output;
}

TEST_F(Distributed, ARankStalledAtStartUpEndsTheRunNamingItAndTheExchange) {
  const FaultOutcome outcome = freeze_a_rank(root_, common("runs"), "clock-offset");
  expect_failed_within(outcome, 3 + 20);  // start-up, then the 3 s timeout
  EXPECT_NE(outcome.output.find("clock-offset exchange"), std::string::npos) << outcome.output;
  expect_survivors_failed(only_child(root_ / "runs"), 1,
                          {"before the first step", "silent: rank 1 did not answer"}, outcome.output);
}

// Frozen as the ring chooses its chunk (the ranks agree on it, and between two hosts over TCP time
// it, before the first step): the others wait there with the run's deadline and name it.
TEST_F(Distributed, ARankStalledWhileTheRingChoosesItsChunkEndsTheRunNamingIt) {
  const FaultOutcome outcome = freeze_a_rank(root_, common("runs"), "ring-chunk");
  expect_failed_within(outcome, 3 + 20);
  expect_survivors_failed(only_child(root_ / "runs"), 1,
                          {"before the first step", "choosing the ring's chunk", "silent: rank 1 did not answer"},
                          outcome.output);
}

// Frozen right after MPI_Init, before any run directory exists: the others' errors name it and the
// exchange (they had unwound into MPI_Finalize, waiting there for it until a timer ended them).
TEST_F(Distributed, ARankStalledBeforeTheRunDirectoryEndsTheRunNamingIt) {
  const FaultOutcome outcome = freeze_a_rank(root_, common("runs"), "control-channel");
  expect_failed_within(outcome, 3 + 20);
  for (const char* rank : {"rank 0: ", "rank 2: "}) {
    const std::string line = std::string(rank) + "timed out after 3.0 s: duplicating a communicator for the control "
                             "channel's communicator; silent: rank 1 did not answer";
    EXPECT_NE(outcome.output.find(line), std::string::npos) << line << "\n" << outcome.output;
  }
}

TEST_F(Distributed, ARankStalledAtShutDownEndsTheRunNamingItAndTheExchange) {
  const FaultOutcome outcome = freeze_a_rank(root_, common("runs"), "weights-checksum");
  expect_failed_within(outcome, 3 + 20);
  expect_survivors_failed(only_child(root_ / "runs"), 1,
                          {"at shut-down: gathering every rank's weights checksum", "silent: rank 1 did not answer"},
                          outcome.output);
}

// transport=mpi blocks in MPI_Allreduce, where no signal or deadline can reach the training thread:
// the watchdog's thread writes the report. A frozen rank: the watchdog's timeout; a killed one:
// mpirun's SIGTERM.
TEST_F(Distributed, UnderMpiAStalledOrKilledRankLeavesEverySurvivingReportFailed) {
  const FaultOutcome stalled = signal_a_rank(root_, common("runs") + " --set comm.timeout_s=3", 1, SIGSTOP, "mpi");
  EXPECT_NE(stalled.exit_code, -1) << "the run hung";
  EXPECT_LT(stalled.seconds, 2 * 3 + 5);
  expect_survivors_failed(only_child(root_ / "runs"), 1, {"silent: rank 1 did not answer"}, stalled.output);
  fs::remove_all(root_ / "runs");
  const FaultOutcome killed = signal_a_rank(root_, common("runs") + " --set comm.timeout_s=5", 2, SIGKILL, "mpi");
  EXPECT_NE(killed.exit_code, -1) << "the run hung";
  EXPECT_LT(killed.seconds, 2 * 5 + 5);
  expect_survivors_failed(only_child(root_ / "runs"), 2, {}, killed.output);
}

TEST_F(Distributed, AKilledRankEndsTheRunWithAClearError) {
  const FaultOutcome outcome = signal_a_rank(root_, common("runs") + " --set comm.timeout_s=5", 2, SIGKILL);
  EXPECT_NE(outcome.exit_code, -1) << "the run hung";
  EXPECT_NE(outcome.exit_code, 0);
  EXPECT_LT(outcome.seconds, 2 * 5 + 5);
  // Rank 0 says it failed, or, when it was reading a message out of the dead rank's memory (Open
  // MPI's shared-memory single copy: "Read -1, expected N, errno = 3"), Open MPI ended it at once
  // and its report is the one its last epoch wrote. Either way the epochs so far are kept.
  const std::string status = outcome.report["status"];
  const bool ended_by_mpi = outcome.output.find("Read -1, expected") != std::string::npos;
  EXPECT_TRUE(status == "failed" || (status == "running" && ended_by_mpi))
      << outcome.report.dump(1).substr(0, 400) << "\n" << outcome.output;
  EXPECT_GE(outcome.report["epochs"].size(), 1u);
}

TEST_F(Distributed, MoreWorkersThanSamplesIsAClearErrorBeforeTraining) {
  const Outcome run = shell(mpirun(3) + " train --set model=lenet5 --set dataset.format=cifar10 --set dataset.path=" +
                        (root_ / "data").string() + " --set output=" + (root_ / "runs").string() +
                        " --set transport=ring --set batch=1000");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("batch size 1000"), std::string::npos) << run.output;
}

// The injected straggler (a sweep axis): rank 1 sleeps 40 ms in each step's compute, so rank 0
// spends about that long waiting in comm, and is seen arriving first at (nearly) every step.
TEST_F(Distributed, AnInjectedStragglerSlowsItsRankAndMakesTheOtherWait) {
  const Outcome run = shell(mpirun(2) + common("straggler") +
                            " --set batch=32 --set steps=5 --set transport=ring --set straggler.rank=1"
                            " --set straggler.delay_ms=40");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json report = read_json(only_child(root_ / "straggler") / "report.json");
  const auto phase_mean = [&](const nlohmann::json& r, const char* phase) {
    return r["summary"]["all_epochs_phases"][phase]["mean_s"].get<double>();
  };
  const nlohmann::json straggler = read_json(only_child(root_ / "straggler") / "worker-1.json");
  EXPECT_GE(phase_mean(straggler, "forward"), 0.040);
  EXPECT_LT(phase_mean(report, "forward"), 0.040);  // rank 0 computes at full speed ...
  EXPECT_GE(phase_mean(report, "comm"), 0.030);     // ... and waits for rank 1
  // Rank 1 arrives last unless the scheduler holds rank 0 back longer than the 40 ms sleep, which
  // a loaded machine has been seen to do once in five steps.
  EXPECT_GE(report["epochs"][0]["slowest_rank_steps"][1].get<int>(), 4);
}

}  // namespace
}  // namespace dtbench
