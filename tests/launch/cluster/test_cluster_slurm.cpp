// dtbench cluster up --slurm end to end, as root: the shipped batch script trains across two hosts
// to a report, a job cancelled mid-run ends every rank with a named error, and `cluster down`
// leaves no daemon, file or socket. Skipped, with the reason, without root or without Slurm.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "support/cluster_fixture.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using testing::cluster_leftovers;
using testing::Outcome;

class ClusterSlurm : public testing::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    if (IsSkipped()) return;
    const Outcome found = testing::shell("command -v munged slurmctld slurmd sbatch");
    if (found.exit_code != 0) GTEST_SKIP() << "Slurm is not installed (scripts/install-deps.sh slurm): " << found.output;
  }

  // A 2-host cluster with Slurm; SLURM_CONF points the client commands at it.
  fs::path up_with_slurm(const std::string& name) {
    const fs::path dir = up(name, 2, "10gbit", "--slurm");
    setenv("SLURM_CONF", (dir / "slurm" / "slurm.conf").c_str(), 1);
    return dir;
  }

  // sbatch of the shipped script from the source tree, its output and runs under the test's folder.
  std::string sbatch(const std::string& options, const std::string& overrides) {
    const fs::path sources = fs::path(DTBENCH_CONFIGS_DIR).parent_path();
    return fmt::format("DTBENCH={} sbatch --chdir={} --output={}/job-%j.out {} {}/cluster/slurm.sbatch "
                       "--set dataset.path={} --set output={} {}",
                       testing::dtbench_binary(), sources.string(), root_.string(), options, DTBENCH_CONFIGS_DIR,
                       (root_ / "data").string(), (root_ / "runs").string(), overrides);
  }

  // The run directory of a job that has started training (within 90 s), or empty.
  fs::path wait_for_run() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    fs::path run;
    while (std::chrono::steady_clock::now() < deadline && (run = testing::only_child(root_ / "runs")).empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return run;
  }

  // Waits (up to 30 s) for `job` to leave the queue; whether it did.
  static bool wait_until_gone(const std::string& job) {
    for (int tries = 0; tries < 150; ++tries) {
      const Outcome queued = testing::shell("squeue --noheader --jobs " + job);
      if (queued.output.empty() || queued.exit_code != 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  // Processes whose command line names `text` (the cluster's directory): Slurm's daemons and steps.
  static std::string processes_naming(const std::string& text) {
    std::string found;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      const std::string pid = entry.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream file(entry.path() / "cmdline");
      std::string line((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      std::replace(line.begin(), line.end(), '\0', ' ');
      if (line.find(text) != std::string::npos) found += pid + ": " + line + "\n";
    }
    return found;
  }
};

TEST_F(ClusterSlurm, TheShippedBatchScriptTrainsAcrossTwoHostsToAReportAndDownLeavesNothing) {
  const std::string name = unique_name();
  const fs::path dir = up_with_slurm(name);
  const Outcome status = testing::dtbench("cluster status " + name);
  EXPECT_EQ(status.exit_code, 0) << status.output;
  EXPECT_TRUE(std::regex_search(status.output, std::regex(name + "-h0 +" + name + "\\* +1 +idle"))) << status.output;
  EXPECT_TRUE(std::regex_search(status.output, std::regex(name + "-h1 +" + name + "\\* +1 +idle"))) << status.output;

  synth("cifar10", 512, 64, "data");
  const Outcome job = testing::shell(sbatch("--wait --time=3", "--set steps=8 --set batch=16"));
  ASSERT_EQ(job.exit_code, 0) << job.output << testing::shell("cat " + (root_ / "job-*.out").string()).output;
  const fs::path run = testing::only_child(root_ / "runs");
  ASSERT_FALSE(run.empty()) << "no run directory under " << (root_ / "runs").string();
  const auto report = testing::read_json(run / "report.json");
  EXPECT_EQ(report.at("world").get<int>(), 2) << report.dump(2);
  EXPECT_EQ(report.at("status").get<std::string>(), "complete") << report.dump(2);
  EXPECT_TRUE(fs::exists(run / "worker-0.json") && fs::exists(run / "worker-1.json"));
  // One worker on each host, as mpirun --hostfile places them.
  const std::string network = report.at("network").dump();
  EXPECT_NE(network.find(name + "-h0"), std::string::npos) << network;
  EXPECT_NE(network.find(name + "-h1"), std::string::npos) << network;
  // Without slurmdbd, sacct reads the job back from the completion log.
  const Outcome sacct = testing::shell("sacct -c --noheader --format=JobName,State");
  EXPECT_NE(sacct.output.find("COMPLETED"), std::string::npos) << sacct.output;

  const Outcome down = testing::dtbench("cluster down " + name);
  EXPECT_EQ(down.exit_code, 0) << down.output;
  EXPECT_EQ(cluster_leftovers(name), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(dir / "slurm"));
  EXPECT_FALSE(fs::exists("/run/dtbench/slurm-" + name));  // the sockets
  EXPECT_EQ(processes_naming(dir.string()), "");
}

TEST_F(ClusterSlurm, ScancelMidRunEndsEveryRankWithANamedErrorInTheReport) {
  const std::string name = unique_name();
  const fs::path dir = up_with_slurm(name);
  synth("cifar10", 512, 64, "data");
  const Outcome submitted = testing::shell(sbatch("--parsable", "--set epochs=1000 --set batch=16"));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string job = submitted.output.substr(0, submitted.output.find_first_of(";\n"));

  // Running, on both nodes, with steps behind it (a trace per rank is written as it trains).
  const fs::path run = wait_for_run();
  ASSERT_FALSE(run.empty()) << testing::shell("squeue; cat " + (root_ / "job-*.out").string()).output;
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const Outcome queued = testing::shell("squeue --noheader --format='%i %T %N' --jobs " + job);
  EXPECT_EQ(queued.output, fmt::format("{} RUNNING {}-h[0-1]\n", job, name));

  EXPECT_EQ(testing::shell("scancel " + job).exit_code, 0);
  EXPECT_TRUE(wait_until_gone(job)) << "job " << job << " still queued: " << testing::shell("squeue").output;
  EXPECT_EQ(processes_naming((root_ / "runs").string()), "") << "a rank outlived its cancelled job";

  const auto report = testing::read_json(run / "report.json");
  EXPECT_EQ(report.at("status").get<std::string>(), "failed") << report.dump(2);
  const std::string error = report.at("error").get<std::string>();
  EXPECT_NE(error.find(fmt::format("cancelled by Slurm (scancel of job {})", job)), std::string::npos) << error;
  const Outcome sacct = testing::shell("sacct -c --noheader --format=JobID,State");
  EXPECT_NE(sacct.output.find(job + " ") , std::string::npos) << sacct.output;
  EXPECT_NE(sacct.output.find("CANCELLED"), std::string::npos) << sacct.output;
  EXPECT_EQ(testing::dtbench("cluster down " + name).exit_code, 0);
  EXPECT_EQ(processes_naming(dir.string()), "");
}

// A node made unreachable mid-job ends the run as under mpirun (test_cluster_freeze.cpp): rank 0's
// report names the silent rank and its host within the transport's timeout.
TEST_F(ClusterSlurm, AFrozenNodeEndsTheJobsRunNamingTheSilentRankAsUnderMpirun) {
  const std::string name = unique_name();
  const fs::path dir = up_with_slurm(name);
  synth("cifar10", 512, 64, "data");
  const Outcome submitted =
      testing::shell(sbatch("--parsable", "--set epochs=1000 --set batch=16 --set comm.timeout_s=5"));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.output;
  const std::string job = submitted.output.substr(0, submitted.output.find_first_of(";\n"));
  const fs::path run = wait_for_run();
  ASSERT_FALSE(run.empty()) << testing::shell("squeue; cat " + (root_ / "job-*.out").string()).output;
  std::this_thread::sleep_for(std::chrono::seconds(3));  // training, past the first steps

  const auto frozen = std::chrono::steady_clock::now();
  const Outcome freeze = testing::dtbench("cluster freeze " + name + " 1");
  ASSERT_EQ(freeze.exit_code, 0) << freeze.output;
  nlohmann::json report;
  while (std::chrono::steady_clock::now() - frozen < std::chrono::seconds(60)) {
    report = testing::read_json(run / "report.json");
    if (report.value("status", "") == "failed") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - frozen).count();
  std::printf("node frozen to rank 0's failed report: %.1f s\n", seconds);
  EXPECT_EQ(report.value("status", ""), "failed") << report.dump(2);
  const std::string error = report.value("error", "");
  EXPECT_NE(error.find("rank 1 on " + name + "-h1 did not answer a roll call"), std::string::npos) << error;
  EXPECT_LT(seconds, 5 + 25) << error;

  EXPECT_EQ(testing::dtbench("cluster thaw " + name + " 1").exit_code, 0);
  testing::shell("scancel " + job);
  EXPECT_TRUE(wait_until_gone(job)) << testing::shell("squeue").output;
  EXPECT_EQ(testing::dtbench("cluster down " + name).exit_code, 0);
  EXPECT_EQ(cluster_leftovers(name), std::vector<std::string>{});
  EXPECT_EQ(processes_naming(dir.string()), "");
}

// The second shipped script: the parameter servers as one job step, the workers as another, to a
// report of a ps-sync run and the servers' own reports; then nothing left.
TEST_F(ClusterSlurm, TheParameterServerScriptRunsServersAndWorkersAsTwoStepsToAReport) {
  const std::string name = unique_name();
  const fs::path dir = up_with_slurm(name);
  synth("cifar10", 512, 64, "data");
  const fs::path sources = fs::path(DTBENCH_CONFIGS_DIR).parent_path();
  const fs::path state = root_ / "servers";
  const Outcome job = testing::shell(fmt::format(
      "DTBENCH={} DTBENCH_PS_STATE={} sbatch --wait --time=3 --chdir={} --output={}/job-%j.out "
      "{}/cluster/slurm-parameter-servers.sbatch sync --set dataset.path={} --set output={} --set steps=8 "
      "--set batch=16",
      testing::dtbench_binary(), state.string(), sources.string(), root_.string(), DTBENCH_CONFIGS_DIR,
      (root_ / "data").string(), (root_ / "runs").string()));
  ASSERT_EQ(job.exit_code, 0) << job.output << testing::shell("cat " + (root_ / "job-*.out").string()).output;
  const fs::path run = testing::only_child(root_ / "runs");
  ASSERT_FALSE(run.empty()) << testing::shell("cat " + (root_ / "job-*.out").string()).output;
  const auto report = testing::read_json(run / "report.json");
  EXPECT_EQ(report.at("status").get<std::string>(), "complete") << report.dump(2);
  EXPECT_EQ(report.at("world").get<int>(), 2);
  EXPECT_EQ(report.at("transport").get<std::string>(), "ps-sync");
  const Outcome servers = testing::shell("ls -R " + state.string());
  EXPECT_NE(servers.output.find("ps.token"), std::string::npos) << servers.output;
  EXPECT_EQ(testing::dtbench("cluster down " + name).exit_code, 0);
  EXPECT_EQ(cluster_leftovers(name), std::vector<std::string>{});
  EXPECT_EQ(processes_naming(dir.string()), "");
}

TEST_F(ClusterSlurm, TheDaemonsOfAClusterWhoseOwnerWasKilledGoWithItsNextStatus) {
  const pid_t owner = fork();
  if (owner == 0) {
    pause();
    _exit(0);
  }
  const std::string name = unique_name();
  const fs::path dir = root_ / name;
  const Outcome made = testing::dtbench(fmt::format("cluster up {} --hosts 2 --slurm --dir {} --owner-pid {}", name,
                                                    dir.string(), owner));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_NE(processes_naming(dir.string()).find("slurmctld"), std::string::npos);
  kill(owner, SIGKILL);
  waitpid(owner, nullptr, 0);
  EXPECT_EQ(testing::dtbench("cluster status").exit_code, 0);
  EXPECT_EQ(cluster_leftovers(name), std::vector<std::string>{});
  EXPECT_EQ(processes_naming(dir.string()), "");
  EXPECT_FALSE(fs::exists(dir / "slurm"));
}

}  // namespace
}  // namespace dtbench
