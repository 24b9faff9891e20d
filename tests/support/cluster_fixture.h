#pragma once
// A test that builds emulated clusters: skipped (with the reason) unless this process may make
// network namespaces; each cluster gets a name unique to the test process, so tests run in
// parallel, and TearDown removes whatever a test left. A test killed before TearDown leaves its
// clusters to the next `cluster up`/`status` (they were made with --owner-pid of the test).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "launch/cluster/host_cgroups.h"
#include "launch/cluster/naming.h"
#include "launch/cluster/registry.h"
#include "support/cli_helpers.h"

namespace dtbench::testing {

// What of cluster `name` still exists: namespaces, interfaces, host cgroups, its record.
inline std::vector<std::string> cluster_leftovers(const std::string& name) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  for (int host = 0; host < cluster::kMaxHosts; ++host) {
    if (fs::exists("/run/netns/" + cluster::namespace_name(name, host))) found.push_back(cluster::namespace_name(name, host));
    if (fs::exists("/sys/class/net/" + cluster::host_veth_name(name, host))) found.push_back(cluster::host_veth_name(name, host));
  }
  if (fs::exists("/sys/class/net/" + cluster::bridge_name(name))) found.push_back(cluster::bridge_name(name));
  for (const auto& cgroup : cluster::existing_host_cgroups(name)) found.push_back(cgroup.string());
  if (fs::exists(cluster::registry_dir() / (name + ".json"))) found.push_back("record " + name);
  return found;
}

class ClusterTest : public MpirunTest {
 protected:
  // Seconds of this machine's CPU time taken by its hypervisor for other guests (/proc/stat's steal).
  static double stolen_seconds() {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
    return static_cast<double>(steal) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "emulated clusters need root (CAP_NET_ADMIN); running as uid " << geteuid();
    const std::string probe = "dtb-probe-" + std::to_string(getpid());
    const Outcome made = shell("ip netns add " + probe + " && ip netns del " + probe);
    if (made.exit_code != 0) GTEST_SKIP() << "cannot make a network namespace here: " << made.output;
    MpirunTest::SetUp();
  }

  void TearDown() override {
    for (const auto& name : made_) {
      if (!cluster_leftovers(name).empty()) dtbench("cluster down " + name);
    }
    MpirunTest::TearDown();
  }

  // A name no other test process uses ("t" + pid + a letter per cluster of this test).
  std::string unique_name() {
    const std::string name = fmt::format("t{}{}", getpid() % 1000000, static_cast<char>('a' + made_.size()));
    made_.push_back(name);
    return name;
  }

  // `dtbench cluster up` owned by this test process, with `options` added (--cores-per-host 0.5);
  // returns the cluster's directory.
  std::filesystem::path up(const std::string& name, int hosts, const std::string& link, const std::string& options = "") {
    const std::filesystem::path dir = root_ / name;
    const Outcome r = dtbench("cluster up " + name + " --hosts " + std::to_string(hosts) + " --link " + link +
                              " --dir " + dir.string() + " --owner-pid " + std::to_string(getpid()) + " " + options);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return dir;
  }

  std::vector<std::string> made_;
};

}  // namespace dtbench::testing
