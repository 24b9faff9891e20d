// A host that hangs mid-run, as root: `cluster freeze` stops every process of the host and
// silences its link; a ring run and a ps-sync run whose server is on that host end within
// comm.timeout_s / ps.timeout_s (and mpirun's daemon probes) naming the host or the server, and `cluster down` still removes
// everything, the frozen processes and the host's cgroups included.
#include <chrono>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "core/util/files.h"
#include "launch/cluster/host_cgroups.h"
#include "launch/cluster/naming.h"
#include "support/cluster_fixture.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using testing::cluster_leftovers;
using testing::Outcome;

constexpr double kTimeout = 5;

class ClusterFreeze : public testing::ClusterTest {
 protected:
  std::string training(const fs::path& dir, const std::string& transport_settings, const fs::path& hostfile) {
    return fmt::format(
        "timeout --kill-after=10 120 {} --mca mca_param_files {}/mca-params.conf --hostfile {} "
        // Stopped ranks get 4 s between SIGTERM and SIGKILL, as a sweep gives them (Open MPI's 1 s
        // can cut the message naming the silent peer short).
        "--mca odls_base_sigkill_timeout 4 -np 2 {} train "
        "--set model=lenet5 --set dataset.format=idx --set dataset.path={} --set threads=1 --set epochs=1000 "
        "--set batch=16 --set comm.timeout_s={} --set output={} {}",
        MPIEXEC, dir.string(), hostfile.string(), DTBENCH_BINARY, (root_ / "data").string(), kTimeout,
        (root_ / "runs").string(), transport_settings);
  }

  // Runs `command` in the background with its output in `log` (a frozen host's processes would
  // hold a pipe open until they are thawed), freezes host 1 once the run has trained an epoch, and
  // returns the seconds from then to the run's end; `output` gets what the run printed.
  double freeze_mid_run(const std::string& name, const std::string& command, std::string& output) {
    const fs::path log = root_ / "run.log";
    testing::Background run("sh -c '" + command + " > " + log.string() + " 2>&1; echo \"exit $?\"'");
    const auto started = std::chrono::steady_clock::now();
    while (testing::read_text(log).find(": test accuracy") == std::string::npos) {
      if (std::chrono::steady_clock::now() - started > std::chrono::seconds(60)) {
        ADD_FAILURE() << "no epoch within 60 s: " << testing::read_text(log);
        return 0;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const auto frozen = std::chrono::steady_clock::now();
    const Outcome freeze = testing::dtbench("cluster freeze " + name + " 1");
    EXPECT_EQ(freeze.exit_code, 0) << freeze.output;
    EXPECT_NE(testing::dtbench("cluster status " + name).output.find("FROZEN"), std::string::npos);
    const std::string exit_code = run.wait_for(std::regex(R"(exit (\d+))"));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - frozen).count();
    output = testing::read_text(log);
    std::printf("host frozen to the run's end: %.1f s\n", seconds);
    EXPECT_NE(exit_code, "0") << output;
    EXPECT_NE(exit_code, "124") << "still running after 120 s: " << output;
    // Our timeout, mpirun's daemon probes (3 s) and the abort, on a busy 2-core machine.
    EXPECT_LT(seconds, kTimeout + 25) << output;
    return seconds;
  }

  void expect_down_leaves_nothing(const std::string& name) {
    const Outcome down = testing::dtbench("cluster down " + name);  // host 1 still frozen
    EXPECT_EQ(down.exit_code, 0) << down.output;
    EXPECT_EQ(cluster_leftovers(name), std::vector<std::string>{});
  }
};

TEST_F(ClusterFreeze, AFrozenHostEndsARingRunNamingItAndDownRemovesItsFrozenProcesses) {
  const std::string name = unique_name();
  const fs::path dir = up(name, 2, "1gbit");
  synth("idx", 512, 64, "data");
  std::string output;
  freeze_mid_run(name, training(dir, "--set transport=ring", dir / "hostfile"), output);
  EXPECT_NE(output.find("rank 1 on " + cluster::host_name(name, 1)), std::string::npos) << output;
  const auto report = testing::read_json(testing::only_child(root_ / "runs") / "report.json");
  EXPECT_EQ(report["status"], "failed");
  expect_down_leaves_nothing(name);
}

TEST_F(ClusterFreeze, FreezingAHostThereIsNotNamesTheHostsThereAre) {
  const std::string name = unique_name();
  up(name, 2, "none");
  const Outcome missing = testing::dtbench("cluster freeze " + name + " 7");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("has no host '7'"), std::string::npos) << missing.output;
  const Outcome no_cluster = testing::dtbench("cluster thaw nosuch 0");
  EXPECT_NE(no_cluster.exit_code, 0);
  EXPECT_NE(no_cluster.output.find("no cluster 'nosuch'"), std::string::npos) << no_cluster.output;
}

TEST_F(ClusterFreeze, AFrozenServerHostEndsAPsSyncRunNamingTheServer) {
  const std::string name = unique_name();
  const fs::path dir = up(name, 2, "1gbit");
  synth("idx", 512, 64, "data");
  const auto record = cluster::read_record(name);
  ASSERT_TRUE(record.has_value());
  testing::Background shard(fmt::format(
      "{} cluster exec {} 1 -- {} ps --set model=lenet5 --set dataset.format=idx --set dataset.path={} --set batch=16 "
      "--listen {}:0 --workers 2 --mode sync --timeout-s {} --insecure --no-checkpoint --output {}",
      DTBENCH_BINARY, name, DTBENCH_BINARY, (root_ / "data").string(), cluster::host_address(record->slot, 1), kTimeout,
      (root_ / "servers").string()));
  const std::string server = shard.wait_for(std::regex(R"(listening on (\S+))"));
  ASSERT_NE(server, "") << shard.output();
  // Both workers on host 0, so that the frozen host holds the server alone: with a worker beside it,
  // the freeze can land while worker 0 waits for that worker at an epoch's end, and the run rightly
  // names the silent rank's host instead of the server.
  const fs::path hostfile = root_ / "workers-on-host-0";
  write_file_atomically(hostfile, cluster::host_address(record->slot, 0) + " slots=2\n");
  const std::string settings =
      fmt::format("--set transport=ps-sync --set ps.timeout_s={} --set ps.servers={}", kTimeout, server);
  std::string output;
  freeze_mid_run(name, training(dir, settings, hostfile), output);
  EXPECT_NE(output.find("parameter server " + server), std::string::npos) << output;
  expect_down_leaves_nothing(name);
  shard.finish();  // ended by `down`
}

}  // namespace
}  // namespace dtbench
