// The cluster's parts that need no root: names, addresses, link rates, how hosts split the cores,
// the command runner and the files mpirun reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <tuple>

#include <fmt/format.h>

#include "core/util/error.h"
#include "launch/cluster/cluster_files.h"
#include "launch/cluster/command_runner.h"
#include "launch/cluster/host_cgroups.h"
#include "launch/cluster/host_cores.h"
#include "launch/cluster/naming.h"
#include "launch/cluster/network.h"
#include "launch/cluster/slurm_config.h"

namespace dtbench::cluster {
namespace {

// Cluster c1 in slot 2 (addresses 198.18.2.x) with its folder at /tmp/c1.
ClusterRecord record_of(int hosts) {
  ClusterRecord r;
  r.name = "c1";
  r.slot = 2;
  r.hosts = hosts;
  r.dir = "/tmp/c1";
  return r;
}

TEST(ClusterNaming, AcceptsShortLowercaseNamesAndRejectsTheRestNamingTheValue) {
  for (const char* good : {"a", "c1", "ring-2", "12345678"}) EXPECT_NO_THROW(validate_name(good)) << good;
  for (const char* bad : {"", "Big", "-lead", "a_b", "123456789", "a b", "a/b", "a;rm"}) {
    try {
      validate_name(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find(std::string("'") + bad + "'"), std::string::npos) << error.what();
    }
  }
}

TEST(ClusterNaming, InterfaceNamesFitTheKernelsLimitAndNeverCollideAcrossClusters) {
  EXPECT_EQ(host_veth_name("12345678", kMaxHosts - 1).size(), 15u);
  EXPECT_EQ(bridge_name("c1"), "dtb-c1");
  EXPECT_EQ(namespace_name("c1", 3), "dtb-c1-h3");
  // Cluster "a" with host 1 against cluster "a-1": veth, bridge and namespace names differ.
  EXPECT_NE(host_veth_name("a", 1), bridge_name("a-1"));
  EXPECT_NE(namespace_name("a", 1), namespace_name("a-h1", 0));
}

TEST(ClusterNaming, AddressesStayInsideTheBenchmarkingRange) {
  EXPECT_EQ(subnet(0), "198.18.0.0/24");
  EXPECT_EQ(host_address(0, 0), "198.18.0.1");
  EXPECT_EQ(bridge_address(3), "198.18.3.254");
  EXPECT_EQ(subnet(kSlotCount - 1), "198.19.255.0/24");
  EXPECT_THROW(subnet(kSlotCount), LogicError);
  EXPECT_THROW(subnet(-1), LogicError);
}

TEST(ClusterNaming, LinkRatesParseToBitsPerSecond) {
  EXPECT_DOUBLE_EQ(parse_link_rate("1gbit").bits_per_second, 1e9);
  EXPECT_DOUBLE_EQ(parse_link_rate("2.5gbit").bits_per_second, 2.5e9);
  EXPECT_DOUBLE_EQ(parse_link_rate("500mbit").bits_per_second, 5e8);
  EXPECT_FALSE(parse_link_rate("none").shaped());
  for (const char* bad : {"", "fast", "1gbps", "0gbit", "-1gbit", "1 gbit", "gbit"}) {
    EXPECT_THROW(parse_link_rate(bad), InputError) << bad;
  }
}

TEST(ClusterShaping, PacketsOfAnEighthAndABucketOfAQuarterMillisecondAtTheRate) {
  // Packets of 1/8 ms of traffic, between 4 KiB and veth's 64 KiB; a bucket of 1/4 ms, at least two packets.
  const auto at = [](const char* rate) { return link_shaping(parse_link_rate(rate)); };
  EXPECT_EQ(at("1gbit").max_packet_bytes, 15625);
  EXPECT_EQ(at("1gbit").bucket_bytes, 31250);
  EXPECT_EQ(at("2.5gbit").max_packet_bytes, 39062);
  EXPECT_EQ(at("2.5gbit").bucket_bytes, 78125);
  EXPECT_EQ(at("10gbit").max_packet_bytes, 65536);
  EXPECT_EQ(at("10gbit").bucket_bytes, 312500);
  EXPECT_EQ(at("25gbit").bucket_bytes, 781250);
  EXPECT_EQ(at("100mbit").max_packet_bytes, 4096);
  EXPECT_EQ(at("100mbit").bucket_bytes, 8192);
  // The bulk's queue: 20 ms at the rate and a bucket, as tbf's "latency 20ms" allowed.
  EXPECT_EQ(at("1gbit").queue_bytes, 2'500'000 + 31250);
  EXPECT_EQ(at("10gbit").queue_bytes, 25'000'000 + 312500);
}

TEST(CommandRunner, CollectsOutputAndExitCodeWithoutAShell) {
  const CommandResult echo = run_command({"echo", "a;b", "$HOME"});
  EXPECT_EQ(echo.exit_code, 0);
  EXPECT_EQ(echo.output, "a;b $HOME\n");  // arguments are passed as they are, never interpreted
  const CommandResult failing = run_command({"sh", "-c", "echo oops >&2; exit 3"});
  EXPECT_EQ(failing.exit_code, 3);
  EXPECT_EQ(failing.output, "oops\n");
  try {
    check_command({"sh", "-c", "echo oops >&2; exit 3"});
    ADD_FAILURE() << "no error";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find("exit 3"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("oops"), std::string::npos) << error.what();
  }
  EXPECT_EQ(run_command({"/nonexistent/program"}).exit_code, 127);
}

TEST(CommandRunner, ACommandPastItsDeadlineIsKilledWithAnError) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(run_command({"sleep", "30"}, 0.3), IoError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(ClusterFiles, MpirunIsToldTheHostsTheAgentAndTheSubnet) {
  ClusterRecord r = record_of(2);
  r.slots_per_host = 4;
  r.link_rate = "1gbit";
  EXPECT_NE(hostfile_text(r).find("198.18.2.1 slots=4\n198.18.2.2 slots=4\n"), std::string::npos);
  const std::string mca = mca_params_text(r);
  EXPECT_NE(mca.find("plm_rsh_agent = /tmp/c1/rsh-agent\n"), std::string::npos) << mca;
  EXPECT_NE(mca.find("btl = self,vader,tcp\n"), std::string::npos) << mca;
  EXPECT_NE(mca.find("btl_tcp_if_include = 198.18.2.0/24\n"), std::string::npos) << mca;
  EXPECT_NE(mca.find("oob_tcp_if_include = 198.18.2.0/24\n"), std::string::npos) << mca;
  EXPECT_NE(mca.find("oob_tcp_keepalive_time = 1\n"), std::string::npos) << mca;
  EXPECT_NE(mpirun_args_text(r).find("--mca oob_tcp_keepalive_probes 2"), std::string::npos) << mpirun_args_text(r);
  const std::string agent = rsh_agent_text(r);
  EXPECT_NE(agent.find("198.18.2.2|c1-h1) ns=dtb-c1-h1 name=c1-h1 cgroups='"), std::string::npos) << agent;
  // Every process mpirun starts on a host joins the host's cgroups before anything else runs.
  for (const auto& dir : host_cgroup_dirs("c1", 1)) {
    EXPECT_NE(agent.find(dir.string()), std::string::npos) << dir << "\n" << agent;
  }
  EXPECT_LT(agent.find("echo $$ > \"$g/cgroup.procs\""), agent.find("exec ip netns exec")) << agent;
  // Binding is the cgroup's: no daemon pins a rank to the core it thinks is its first.
  EXPECT_NE(mca.find("hwloc_base_binding_policy = none\n"), std::string::npos) << mca;
  EXPECT_NE(mpirun_args_text(r).find("--mca hwloc_base_binding_policy none"), std::string::npos);
  const auto argv = on_host_argv(r, 1, {"echo", "x y"});
  const auto ip = std::find(argv.begin(), argv.end(), "ip");
  ASSERT_NE(ip, argv.end());
  EXPECT_EQ(ip[3], "dtb-c1-h1");
  // The cgroups are joined before `ip netns exec` (inside, /sys no longer shows them).
  for (const auto& dir : host_cgroup_dirs("c1", 1)) {
    EXPECT_NE(std::find_if(argv.begin(), ip, [&](const std::string& a) { return a.find(dir.string()) != std::string::npos; }),
              ip) << dir;
  }
  EXPECT_EQ(argv.back(), "x y");  // one argument still
}

// Where hosts share a core, the agent makes the ranks yield it while they wait (a setting the user
// gave mpirun's environment wins) and tells them their quota; hosts with whole cores of their own
// are left polling.
TEST(ClusterFiles, RanksOnHostsThatShareCoresAreToldToYield) {
  ClusterRecord r = record_of(3);
  const std::string yield = "export OMPI_MCA_mpi_yield_when_idle=\"${OMPI_MCA_mpi_yield_when_idle:-1}\"";
  for (const auto& [cores, time_sliced, shares] :
       {std::tuple{1.0, false, false}, {2.0, false, false}, {0.67, false, true}, {1.5, false, true}, {1.0, true, true}}) {
    r.cores_per_host = cores;
    r.time_sliced = time_sliced;
    EXPECT_EQ(hosts_share_cores(r), shares) << cores << " core(s), time-sliced " << time_sliced;
    const std::string agent = rsh_agent_text(r);
    const size_t at = agent.find(yield);
    EXPECT_EQ(at != std::string::npos, shares) << agent;
    if (shares) {
      EXPECT_LT(at, agent.find("exec ip netns exec")) << agent;
    }
    // ... and tells every process it starts the host's quota, which the host's own /sys hides.
    const size_t quota = agent.find(fmt::format("export DTBENCH_CPU_QUOTA_CORES={:g}\n", cores));
    EXPECT_EQ(quota != std::string::npos, shares) << agent;
    if (shares) {
      EXPECT_LT(quota, agent.find("exec ip netns exec")) << agent;
    }
  }
}

TEST(ClusterSlurmFiles, EveryHostIsANodeAtItsAddressWithItsCoresAndEveryFolderIsTheClusters) {
  ClusterRecord r = record_of(3);
  r.cores_per_host = 0.67;
  const std::string conf = slurm_conf_text(r);
  EXPECT_NE(conf.find("SlurmctldHost=c1-h0(198.18.2.1)\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("NodeName=c1-h0 NodeAddr=198.18.2.1 CPUs=1 "), std::string::npos) << conf;
  EXPECT_NE(conf.find("NodeName=c1-h2 NodeAddr=198.18.2.3 CPUs=1 "), std::string::npos) << conf;
  EXPECT_NE(conf.find("AuthInfo=socket=/run/dtbench/slurm-c1/munge.socket\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("SlurmdSpoolDir=/run/dtbench/slurm-c1/spool-%n\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("ProctrackType=proctrack/linuxproc\n"), std::string::npos) << conf;
  EXPECT_NE(conf.find("TaskPlugin=task/none\n"), std::string::npos) << conf;
  // Every path Slurm writes is under the cluster's folder, which `down` removes.
  for (const char* key : {"StateSaveLocation=", "TmpFS=", "PidFile=", "LogFile=", "JobCompLoc="}) {
    for (size_t at = conf.find(key); at != std::string::npos; at = conf.find(key, at + 1)) {
      EXPECT_EQ(conf.compare(at + std::string(key).size(), 13, "/tmp/c1/slurm"), 0) << conf.substr(at, 60);
    }
  }
  r.cores_per_host = 2;
  EXPECT_EQ(node_cpus(r), 2);
}

TEST(HostCores, CpuListsReadAndWriteAsTheKernelWritesThem) {
  EXPECT_EQ(parse_cpu_list("0-2,5", "x"), (std::vector<int>{0, 1, 2, 5}));
  EXPECT_EQ(parse_cpu_list("3,1,1", "x"), (std::vector<int>{1, 3}));
  EXPECT_EQ(format_cpu_list({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(format_cpu_list({4}), "4");
  for (const char* bad : {"", "a", "2-1", "1-", "-1", "0,,1"}) {
    try {
      parse_cpu_list(bad, "--cpuset");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find("--cpuset"), std::string::npos) << error.what();
    }
  }
}

TEST(HostCores, WholeCoreHostsGetACoreEachAndNeverShareOne) {
  const CoresPlan two = plan_host_cores(2, 0, {0, 1});  // the default: the machine's cores / hosts
  EXPECT_FALSE(two.time_sliced);
  EXPECT_EQ(two.hosts, (std::vector<HostCores>{{"0", 1.0}, {"1", 1.0}}));
  const CoresPlan on_cores_4_to_7 = plan_host_cores(2, 2, {4, 5, 6, 7});
  EXPECT_EQ(on_cores_4_to_7.hosts, (std::vector<HostCores>{{"4-5", 2.0}, {"6-7", 2.0}}));
}

TEST(HostCores, FractionalHostsShareOnlyTheCoreTheirSharesStraddle) {
  const CoresPlan halves = plan_host_cores(4, 0.5, {0, 1});
  EXPECT_FALSE(halves.time_sliced);
  EXPECT_EQ(halves.hosts, (std::vector<HostCores>{{"0", 0.5}, {"0", 0.5}, {"1", 0.5}, {"1", 0.5}}));
  EXPECT_EQ(plan_host_cores(2, 0.5, {0, 1}).hosts, (std::vector<HostCores>{{"0", 0.5}, {"0", 0.5}}));
  const CoresPlan thirds = plan_host_cores(3, 0, {0, 1});  // 2/3 of a core each
  EXPECT_FALSE(thirds.time_sliced);
  ASSERT_EQ(thirds.hosts.size(), 3u);
  EXPECT_EQ(thirds.hosts[0].cpus, "0");
  EXPECT_EQ(thirds.hosts[1].cpus, "0-1");
  EXPECT_EQ(thirds.hosts[2].cpus, "1");
  EXPECT_NEAR(thirds.hosts[2].cores, 2.0 / 3.0, 1e-9);
}

TEST(HostCores, APartOfACoreNoHostIsPromisedGetsAFiller) {
  // 3 half-core hosts on 2 cores: core 0 holds two, core 1 one and half a core to spare.
  EXPECT_EQ(plan_host_cores(3, 0.5, {0, 1}).fillers, (std::vector<HostCores>{{"1", 0.5}}));
  EXPECT_EQ(plan_host_cores(1, 0.5, {0, 1}).fillers, (std::vector<HostCores>{{"0", 0.5}}));
  const CoresPlan fifths = plan_host_cores(5, 0.3, {4, 5});  // 0.3 x 5 = 1.5: core 5 half promised
  ASSERT_EQ(fifths.fillers.size(), 1u);
  EXPECT_EQ(fifths.fillers[0].cpus, "5");
  EXPECT_NEAR(fifths.fillers[0].cores, 0.5, 1e-9);
  const CoresPlan sevenths = plan_host_cores(3, 0.6, {0, 1});  // 0.6 x 3: host 1 straddles both cores
  ASSERT_EQ(sevenths.fillers.size(), 1u);
  EXPECT_EQ(sevenths.fillers[0].cpus, "1");
  EXPECT_NEAR(sevenths.fillers[0].cores, 0.2, 1e-9);
  // Cores every host's share fills, or that no host uses, have none.
  EXPECT_TRUE(plan_host_cores(4, 0.5, {0, 1}).fillers.empty());
  EXPECT_TRUE(plan_host_cores(2, 0.5, {0, 1}).fillers.empty());  // both on core 0; core 1 unused
  EXPECT_TRUE(plan_host_cores(3, 0, {0, 1}).fillers.empty());    // 2/3 of a core each
  EXPECT_TRUE(plan_host_cores(1, 1, {0, 1}).fillers.empty());
  // Hosts on every core (time-sliced) or on the cores --cpuset names are not laid out: none.
  EXPECT_TRUE(plan_host_cores(3, 1, {0, 1}).fillers.empty());
  EXPECT_TRUE(plan_host_cores(1, 0.5, {0, 1}, "0-1").fillers.empty());
}

// --spread: hosts of less than a core one to a core while there are cores, a filler beside each
// on the part it leaves; where a core must hold more than one, as few as the cores allow.
TEST(HostCores, SpreadHostsOfLessThanACoreGoOneToACoreWhereTheCoresAllow) {
  const CoresPlan two = plan_host_cores(2, 0.5, {0, 1}, "", true);
  EXPECT_EQ(two.hosts, (std::vector<HostCores>{{"0", 0.5}, {"1", 0.5}}));
  EXPECT_EQ(two.fillers, (std::vector<HostCores>{{"0", 0.5}, {"1", 0.5}}));
  EXPECT_EQ(plan_host_cores(2, 0.25, {0, 1, 2, 3}, "", true).hosts,
            (std::vector<HostCores>{{"0", 0.25}, {"2", 0.25}}));
  // 3 and 4 half-core hosts on 2 cores lie as side by side.
  EXPECT_EQ(plan_host_cores(3, 0.5, {0, 1}, "", true).hosts, plan_host_cores(3, 0.5, {0, 1}).hosts);
  EXPECT_EQ(plan_host_cores(3, 0.5, {0, 1}, "", true).fillers, plan_host_cores(3, 0.5, {0, 1}).fillers);
  EXPECT_EQ(plan_host_cores(4, 0.5, {0, 1}, "", true).hosts, plan_host_cores(4, 0.5, {0, 1}).hosts);
  const CoresPlan fifths = plan_host_cores(5, 0.3, {4, 5}, "", true);  // 3 hosts on core 4, 2 on core 5
  ASSERT_EQ(fifths.fillers.size(), 2u);
  EXPECT_NEAR(fifths.fillers[0].cores, 0.1, 1e-9);
  EXPECT_NEAR(fifths.fillers[1].cores, 0.4, 1e-9);
  // Hosts that cannot keep to one core each (3 of 0.6 on 2), or of a core or more: side by side.
  EXPECT_EQ(plan_host_cores(3, 0.6, {0, 1}, "", true).hosts, plan_host_cores(3, 0.6, {0, 1}).hosts);
  EXPECT_EQ(plan_host_cores(2, 1, {0, 1, 2, 3}, "", true).hosts, plan_host_cores(2, 1, {0, 1, 2, 3}).hosts);
  try {
    plan_host_cores(2, 0.5, {0, 1}, "0-1", true);
    ADD_FAILURE() << "--spread with --cpuset accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("--spread"), std::string::npos) << error.what();
  }
}

TEST(HostCores, MoreCoresThanTheMachineHasAreTimeSlicedOnEveryCore) {
  const CoresPlan plan = plan_host_cores(3, 1, {0, 1});
  EXPECT_TRUE(plan.time_sliced);
  EXPECT_EQ(plan.hosts, (std::vector<HostCores>(3, HostCores{"0-1", 1.0})));
  const CoresPlan pinned = plan_host_cores(2, 0, {0, 1}, "0");  // every host on core 0, a core's quota each
  EXPECT_TRUE(pinned.time_sliced);
  EXPECT_EQ(pinned.hosts, (std::vector<HostCores>(2, HostCores{"0", 1.0})));
}

TEST(HostCores, ImpossibleSharesAreRefusedNamingTheOption) {
  const auto refused = [](int hosts, double cores, const std::string& cpuset) {
    try {
      plan_host_cores(hosts, cores, {0, 1}, cpuset);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused(2, 3, "").find("--cores-per-host 3"), std::string::npos);
  EXPECT_NE(refused(2, 0.001, "").find("--cores-per-host"), std::string::npos);
  EXPECT_NE(refused(2, 0, "5").find("--cpuset 5: core 5"), std::string::npos);
  EXPECT_NE(refused(2, 2, "0").find("--cores-per-host 2: more than the 1 core(s) of --cpuset 0"), std::string::npos);
}

TEST(HostCores, AnAllowanceIsItsQuotaOrItsCoresWhicheverIsLess) {
  EXPECT_DOUBLE_EQ((CpuAllowance{{0, 1}, 0.5}.usable_cores()), 0.5);
  EXPECT_DOUBLE_EQ((CpuAllowance{{0}, 0.0}.usable_cores()), 1.0);
  EXPECT_DOUBLE_EQ((CpuAllowance{{0}, 4.0}.usable_cores()), 1.0);
  EXPECT_EQ((CpuAllowance{{0, 1}, 0.5}.text()), "cores 0-1, quota 0.5");
  // This process: at least one core, and a quota only where its cgroup sets one.
  const CpuAllowance own = this_process_allowance();
  EXPECT_FALSE(own.cpus.empty());
  EXPECT_GE(own.quota_cores, 0.0);
}

}  // namespace
}  // namespace dtbench::cluster
