// `dtbench sweep` with launch.cluster, as root: the sweep brings an emulated cluster up, runs the
// ring across its hosts and a parameter server on each host beside the workers, and removes the
// cluster afterwards — also when stopped with Ctrl-C in the middle of a run.
#include <signal.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "launch/cluster/naming.h"
#include "support/cluster_fixture.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using testing::cluster_leftovers;
using testing::Outcome;

class ClusterSweep : public testing::ClusterTest {
 protected:
  fs::path write_sweep(const std::string& transports, int steps) {
    synth("idx", 256, 64, "data");
    const fs::path file = root_ / "sweep.yaml";
    std::ofstream(file) << fmt::format(
        "name: across\n"
        "set: {{model: lenet5, dataset.format: idx, dataset.path: {}, steps: {}, batch: 16, threads: 1}}\n"
        "launch: {{cluster: {{hosts: 2, link: 10gbit}}}}\n"
        "axes: {{transport: [{}]}}\n"
        "repetitions: 1\nwarmup: 0\ncap_s: 120\noutput: {}\n",
        (root_ / "data").string(), steps, transports, (root_ / "out").string());
    return file;
  }
};

// Polls `condition` every 50 ms until it holds or `seconds` pass; whether it held.
bool eventually(const std::function<bool()>& condition, double seconds) {
  for (int i = 0; i < static_cast<int>(seconds * 20) && !condition(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

std::string cluster_named_in(const std::string& output) {
  std::smatch match;
  return std::regex_search(output, match, std::regex(R"(bringing up cluster (\S+):)")) ? match[1].str() : "";
}

TEST_F(ClusterSweep, RunsTheRingAndAServerPerHostAcrossTheHostsThenRemovesTheCluster) {
  const Outcome r = testing::dtbench("sweep " + write_sweep("ring, ps-async", 3).string() + " --no-report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string name = cluster_named_in(r.output);
  ASSERT_FALSE(name.empty()) << r.output;
  EXPECT_EQ(cluster_leftovers(name), std::vector<std::string>{});

  const fs::path runs = root_ / "out" / "across";
  for (const char* transport : {"ring", "ps-async"}) {
    SCOPED_TRACE(transport);
    const fs::path run = runs / (std::string("transport=") + transport) / "rep-1";
    ASSERT_EQ(testing::read_json(run / "run.json")["status"], "complete");
    // One worker per host, each under its host's name.
    EXPECT_EQ(testing::read_json(run / "worker-0.json")["provenance"]["hostname"], name + "-h0");
    EXPECT_EQ(testing::read_json(run / "worker-1.json")["provenance"]["hostname"], name + "-h1");
  }
  // Shard k listens on host k, on the cluster's subnet.
  const fs::path ps = runs / "transport=ps-async" / "rep-1";
  for (int shard = 0; shard < 2; ++shard) {
    const std::string log = testing::read_text(ps / fmt::format("server-{}.log", shard));
    EXPECT_TRUE(std::regex_search(log, std::regex(fmt::format(R"(listening on 198\.1[89]\.\d+\.{}:\d+)", shard + 1))))
        << log;
  }
}

TEST_F(ClusterSweep, CtrlCInTheMiddleOfARunRemovesTheCluster) {
  const fs::path pid_file = root_ / "sweep.pid";
  testing::Background sweep(fmt::format("sh -c 'echo $$ > {}; exec {} sweep {} --no-report'", pid_file.string(),
                                        DTBENCH_BINARY, write_sweep("ring", 100000).string()));
  const std::string name = sweep.wait_for(std::regex(R"(bringing up cluster (\S+):)"));
  ASSERT_FALSE(name.empty()) << sweep.output();
  // Into the run: its workers have started training.
  const fs::path run = root_ / "out" / "across" / "transport=ring" / "rep-1";
  ASSERT_TRUE(eventually([&] { return fs::exists(run / "trace-1.json"); }, 30)) << sweep.output();
  ASSERT_EQ(kill(std::stoi(testing::read_text(pid_file)), SIGINT), 0);
  EXPECT_NE(sweep.finish(), 0);
  EXPECT_NE(sweep.output().find("sweep interrupted by signal 2"), std::string::npos) << sweep.output();
  EXPECT_NE(sweep.output().find("cluster " + name + " removed"), std::string::npos) << sweep.output();
  EXPECT_EQ(cluster_leftovers(name), std::vector<std::string>{});
  EXPECT_EQ(testing::read_json(run / "run.json")["status"], "interrupted");
}

// Every transport trains LeNet-5 across 3 hosts and ends where the same 3 workers on one host end
// (shared memory between the ranks, the servers on their host): the ring bit for bit (the same sums
// in the same order), mpi and ps-sync within the equivalence tests' 1e-5. ps-async's weights depend
// on the order in which pushes arrive, so it is only required to train and to cross the hosts.
TEST_F(ClusterSweep, EveryTransportAcrossThreeHostsEndsWithTheWeightsOfOneHost) {
  synth("idx", 256, 64, "data");
  const fs::path file = root_ / "equal.yaml";
  std::ofstream(file) << fmt::format(
      "name: equal\n"
      "set: {{model: lenet5, dataset.format: idx, dataset.path: {}, steps: 4, batch: 16, threads: 1, seed: 5,\n"
      "      save_weights: true, dataset.augment: false}}\n"
      "launch: {{cluster: {{hosts: 3, link: 10gbit}}}}\n"
      "servers: 3\n"
      "axes:\n"
      "  network: [{{label: one-host, hosts: 1, slots: 3}}, {{label: three-hosts, hosts: 3}}]\n"
      "  transport: [ring, mpi, ps-sync, ps-async]\n"
      "repetitions: 1\nwarmup: 0\ncap_s: 120\noutput: {}\n",
      (root_ / "data").string(), (root_ / "out").string());
  const Outcome r = testing::dtbench("sweep " + file.string() + " --no-report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path runs = root_ / "out" / "equal";
  const auto run_of = [&](const std::string& network, const std::string& transport) {
    return runs / ("network=" + network + ",transport=" + transport) / "rep-1";
  };
  for (const std::string transport : {"ring", "mpi", "ps-sync", "ps-async"}) {
    SCOPED_TRACE(transport);
    const auto across = testing::read_json(run_of("three-hosts", transport) / "report.json");
    const auto one = testing::read_json(run_of("one-host", transport) / "report.json");
    ASSERT_EQ(across["status"], "complete");
    EXPECT_EQ(across["network"]["hosts"], 3);
    EXPECT_EQ(one["network"]["hosts"], 1);
    if (transport == "ring" || transport == "mpi") {
      EXPECT_EQ(across["network"]["pair_paths"]["TCP"], 3);
      EXPECT_EQ(one["network"]["pair_paths"]["shared memory"], 3);
    }
    const auto got = testing::read_weights(run_of("three-hosts", transport) / "weights.bin");
    const auto expected = testing::read_weights(run_of("one-host", transport) / "weights.bin");
    ASSERT_EQ(got.size(), expected.size());
    ASSERT_FALSE(got.empty());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(got[i] - expected[i])));
    fmt::print("{}: largest weight difference, 3 hosts against one host: {:g}\n", transport, worst);
    if (transport == "ring") {
      EXPECT_EQ(worst, 0.0);
    } else if (transport != "ps-async") {
      EXPECT_LT(worst, 1e-5);
    }
    for (float w : got) ASSERT_TRUE(std::isfinite(w));
  }
}

// The host of a parameter server and a worker cut off mid-run: the run ends in bounded time, and the
// workers on the other hosts name that server (not the one their sync push happened to wait on);
// the cut-off worker names the servers it lost. Nothing of the cluster is left.
TEST_F(ClusterSweep, AServerWhoseHostIsCutOffIsNamedByTheWorkers) {
  synth("idx", 2048, 64, "data");
  const fs::path file = root_ / "cut.yaml";
  std::ofstream(file) << fmt::format(
      "name: cut\n"
      "set: {{model: lenet5, dataset.format: idx, dataset.path: {}, epochs: 1000, batch: 16, threads: 1}}\n"
      "launch: {{cluster: {{hosts: 3, link: 1gbit}}}}\n"
      "axes: {{transport: [ps-sync]}}\n"
      "repetitions: 1\nwarmup: 0\ncap_s: 120\noutput: {}\n",
      (root_ / "data").string(), (root_ / "out").string());
  testing::Background sweep(fmt::format("{} sweep {} --no-report", DTBENCH_BINARY, file.string()));
  const std::string name = sweep.wait_for(std::regex(R"(bringing up cluster (\S+):)"));
  ASSERT_FALSE(name.empty()) << sweep.output();
  const fs::path run = root_ / "out" / "cut" / "transport=ps-sync" / "rep-1";
  // Into training: rank 0 has finished an epoch.
  const auto trained = [&] { return testing::read_text(run / "workers.log").find("epoch 1: test accuracy") != std::string::npos; };
  ASSERT_TRUE(eventually(trained, 60)) << sweep.output();
  std::smatch address;
  const std::string log = testing::read_text(run / "server-2.log");
  ASSERT_TRUE(std::regex_search(log, address, std::regex(R"(listening on (\S+))"))) << log;
  const auto cut = std::chrono::steady_clock::now();
  ASSERT_EQ(testing::shell("ip link set " + cluster::host_veth_name(name, 2) + " down").exit_code, 0);
  sweep.finish();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
  fmt::print("host 2 cut to the sweep's end: {:.1f} s\n", seconds);
  EXPECT_LT(seconds, 60) << sweep.output();
  const std::string lost = "parameter server " + address[1].str() + " (shard 2) did not answer";
  for (int rank = 0; rank < 2; ++rank) {
    const auto report = testing::read_json(run / fmt::format("worker-{}.json", rank));
    EXPECT_EQ(report["status"], "failed") << rank;
    EXPECT_NE(report.value("error", "").find(lost), std::string::npos) << rank << ": " << report.dump(2);
  }
  const auto cut_off = testing::read_json(run / "worker-2.json");
  EXPECT_EQ(cut_off["status"], "failed");
  EXPECT_NE(cut_off.value("error", "").find("(shard 0)"), std::string::npos) << cut_off.dump(2);
  EXPECT_EQ(cluster_leftovers(name), std::vector<std::string>{});
}

}  // namespace
}  // namespace dtbench
