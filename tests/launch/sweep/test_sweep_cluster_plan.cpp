// Sweeps on an emulated cluster, as planned (no root needed): launch.cluster places one worker per
// slot and one shard per host unless told otherwise, hosts and link may be axes, and every mistake
// is an error naming the key.
#include <gtest/gtest.h>

#include <fstream>

#include "core/util/error.h"
#include "launch/sweep/plan.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

class SweepClusterPlan : public testing::TempDirTest {
 protected:
  std::vector<SweepConfiguration> expand(const std::string& body) {
    const fs::path file = root_ / "cluster.yaml";
    std::ofstream(file) << body;
    return expand_sweep(load_sweep(file, {}));
  }
  // The message of the InputError that `body` raises ("" if none).
  std::string error_of(const std::string& body) {
    try {
      expand(body);
    } catch (const InputError& error) {
      return error.what();
    }
    return "";
  }
};

TEST_F(SweepClusterPlan, OneWorkerPerSlotAndOneShardPerHostWithHostsAndLinkAsAxes) {
  const auto configurations = expand(
      "launch: {cluster: {hosts: 3, link: 1gbit}}\n"
      "axes:\n  hosts: [2, 3]\n  link: [1gbit, 10gbit]\n  transport: [ring, ps-sync]\n");
  ASSERT_EQ(configurations.size(), 8u);
  const SweepConfiguration& first = configurations[0];
  EXPECT_EQ(first.id, "hosts=2,link=1gbit,transport=ring");
  ASSERT_TRUE(first.cluster.has_value());
  EXPECT_EQ(*first.cluster, (SweepCluster{.hosts = 2, .slots = 1, .link = "1gbit"}));
  EXPECT_EQ(first.workers, 2);
  EXPECT_TRUE(first.needs_mpirun());
  const SweepConfiguration& last = configurations[7];
  EXPECT_EQ(last.id, "hosts=3,link=10gbit,transport=ps-sync");
  EXPECT_EQ(*last.cluster, (SweepCluster{.hosts = 3, .slots = 1, .link = "10gbit"}));
  EXPECT_EQ(last.workers, 3);
  EXPECT_EQ(last.servers, 3);  // a shard beside each worker
  // Each host's cores are this machine's shared out, unless cores_per_host says otherwise.
  EXPECT_TRUE(last.cluster->label().starts_with("3 hosts x 1 slot x ")) << last.cluster->label();
  EXPECT_TRUE(last.cluster->label().ends_with(" core(s), link 10gbit")) << last.cluster->label();
  // Cluster keys are the runner's, never blueprint overrides.
  for (const auto& o : last.overrides) EXPECT_FALSE(o.starts_with("hosts=") || o.starts_with("link=")) << o;
}

TEST_F(SweepClusterPlan, CoresPerHostIsAKeyAndAnAxis) {
  const auto configurations = expand("launch: {cluster: {hosts: 2, cores_per_host: 0.5}}\n"
                                     "axes:\n  cores_per_host: [0.5, 1]\nset: {transport: ring}\n");
  ASSERT_EQ(configurations.size(), 2u);
  EXPECT_EQ(configurations[0].cluster->cores_per_host, 0.5);
  EXPECT_EQ(configurations[0].cluster->label(), "2 hosts x 1 slot x 0.5 core(s), link none");
  EXPECT_EQ(configurations[1].cluster->label(), "2 hosts x 1 slot x 1 core(s), link none");
  for (const auto& c : configurations) {
    for (const auto& o : c.overrides) EXPECT_FALSE(o.starts_with("cores_per_host=")) << o;
  }
  EXPECT_NE(error_of("launch: {cluster: {hosts: 2, cores_per_host: lots}}\n").find("'launch.cluster.cores_per_host' value "
                                                                                 "'lots': expected a number of cores"),
            std::string::npos);
  EXPECT_NE(error_of("launch: {cluster: {hosts: 2}}\naxes: {cores_per_host: [0]}\n").find("'axes.cores_per_host'"),
            std::string::npos);
}

TEST_F(SweepClusterPlan, WorkersAndServersGivenAreKeptWithinTheSlots) {
  auto c = expand("launch: {cluster: {hosts: 2, slots: 2}}\nworkers: 3\nservers: 1\nset: {transport: ps-async}\n");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].workers, 3);
  EXPECT_EQ(c[0].servers, 1);
  const std::string too_many = error_of("launch: {cluster: {hosts: 2}}\nworkers: 3\nset: {transport: ring}\n");
  EXPECT_NE(too_many.find("3 workers on 2 hosts x 1 slot"), std::string::npos) << too_many;
}

TEST_F(SweepClusterPlan, MistakesNameTheKey) {
  EXPECT_NE(error_of("axes: {hosts: [2, 3]}\n").find("axis 'hosts' sets hosts, which needs launch.cluster"),
            std::string::npos);
  EXPECT_NE(error_of("launch: {cluster: {hosts: 2, link: fast}}\n").find("'launch.cluster.link'"), std::string::npos);
  EXPECT_NE(error_of("launch: {cluster: {hosts: 2}}\naxes: {link: [1gbit, 3furlongs]}\n").find("'axes.link'"),
            std::string::npos);
  EXPECT_NE(error_of("launch: {cluster: {hosts: 99}}\n").find("at most 32 hosts"), std::string::npos);
  EXPECT_NE(error_of("launch: {cluster: {hosts: 0}}\n").find("'launch.cluster.hosts' value '0'"), std::string::npos);
  EXPECT_NE(error_of("launch: {cluster: {hosts: 2, racks: 1}}\n").find("unknown key 'launch.cluster.racks'"),
            std::string::npos);
  EXPECT_NE(error_of("launch: {cluster: {hosts: 2}, hostfile: h}\n").find("no launch.hostfile"), std::string::npos);
}

}  // namespace
}  // namespace dtbench
