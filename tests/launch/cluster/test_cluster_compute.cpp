// Emulated hosts own compute, as root: each host's processes run on its own cores under its own
// quota, so a CPU-bound step on two hosts at once is as fast as on one alone (it was twice as
// slow when every host's rank was pinned to core 0), a half-core host gets half a core, and
// doctor fails ranks of two hosts pinned to one core. These tests time CPU-bound work, so CTest
// runs them alone (RUN_SERIAL): a neighbouring test on the same two cores would be measured too.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "launch/cluster/host_cgroups.h"
#include "launch/cluster/host_cores.h"
#include "support/cluster_fixture.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using testing::Outcome;

class ClusterCompute : public testing::ClusterTest {
 protected:
  // The median step of LeNet-5 (batch 42, one BLAS thread) in ms, from `bench step`'s table.
  static double step_ms(const std::string& output) {
    std::smatch match;
    const std::regex row(R"(lenet5\s+42\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+))");
    if (!std::regex_search(output, match, row)) return -1;
    return std::stod(match[1].str());
  }
  // One counter ("nr_throttled 3") of a cgroup's cpu.stat; 0 where the file or the key is missing.
  static long cgroup_counter(const fs::path& file, const std::string& key) {
    std::ifstream in(file);
    std::string k;
    long value = 0;
    while (in >> k >> value) {
      if (k == key) return value;
    }
    return 0;
  }
  // `dtbench doctor` across the cluster made in `dir`, one rank per host: each rank's cores.
  static Outcome run_doctor(const fs::path& dir, int ranks) {
    return testing::shell(fmt::format(
        "timeout 60 {} --mca mca_param_files {}/mca-params.conf --hostfile {}/hostfile -np {} {} doctor --timeout-s 5",
        MPIEXEC, dir.string(), dir.string(), ranks, DTBENCH_BINARY));
  }
  // `bench allreduce` of one size across the cluster made in `dir`, one rank per host, 40 timed
  // iterations; its table to `json`.
  static Outcome bench_allreduce(const fs::path& dir, int ranks, const std::string& size, const fs::path& json) {
    return testing::shell(fmt::format(
        "timeout --kill-after=10 120 {} --mca mca_param_files {}/mca-params.conf --hostfile {}/hostfile "
        "-np {} {} bench allreduce --sizes {} --iters 40 --warmup 5 --json {}",
        MPIEXEC, dir.string(), dir.string(), ranks, DTBENCH_BINARY, size, json.string()));
  }
  std::string step_on(const std::string& cluster, int host) const {
    return fmt::format("{} cluster exec {} {} -- {} bench step --model lenet5 --batch 42 --threads 1 --steps 200 "
                       "--warmup 20",
                       DTBENCH_BINARY, cluster, host, DTBENCH_BINARY);
  }
};

TEST_F(ClusterCompute, TwoHostsWithACoreEachStepAtOnceAsFastAsTwoCoresOfTheMachine) {
  if (cluster::allowed_cpus().size() < 2) GTEST_SKIP() << "needs two cores";
  const std::string name = unique_name();
  up(name, 2, "none", "--cores-per-host 1");
  const auto allowed = [&](int host) {
    return testing::dtbench(fmt::format("cluster exec {} {} -- grep Cpus_allowed_list /proc/self/status", name, host)).output;
  };
  EXPECT_NE(allowed(0), allowed(1));
  EXPECT_NE(allowed(0).find("\t0\n"), std::string::npos) << allowed(0);
  EXPECT_NE(allowed(1).find("\t1\n"), std::string::npos) << allowed(1);

  // The best of five tries each, interleaved: a virtual machine's cores stall now and then, and
  // the least disturbed try is the one that tells what the hosts themselves cost each other. The
  // peer is the same two steps on two cores of this machine without any emulation (taskset): two
  // real cores share caches and memory bandwidth, and the hosts may cost each other that, no more.
  const std::string bare = std::string(DTBENCH_BINARY) +
                           " bench step --model lenet5 --batch 42 --threads 1 --steps 200 --warmup 20";
  const auto at_once = [&](const std::string& first_command, const std::string& second_command) {
    testing::Background first(first_command);
    const Outcome second = testing::shell(second_command);
    EXPECT_EQ(first.finish(), 0) << first.output();
    EXPECT_EQ(second.exit_code, 0) << second.output;
    return std::max(step_ms(first.output()), step_ms(second.output));
  };
  // A round's figures, with what the virtual machine and the hosts' quotas took meanwhile: a round
  // that misses names its cause, stolen time (another guest on the same physical cores) or throttling.
  struct Round {
    double alone = 1e9, hosts = 1e9, cores = 1e9;
    double stolen_s = 0;
    long throttled = 0;
    bool holds() const { return hosts < 1.3 * cores && hosts < 1.5 * alone; }
  };
  const auto throttled_periods = [&] {
    long periods = 0;
    for (int host = 0; host < 2; ++host) {
      for (const auto& dir : cluster::host_cgroup_dirs(name, host)) periods += cgroup_counter(dir / "cpu.stat", "nr_throttled");
    }
    return periods;
  };
  const auto measure_round = [&] {
    Round r;
    const double stolen_before = stolen_seconds();
    const long throttled_before = throttled_periods();
    for (int attempt = 0; attempt < 5; ++attempt) {
      const Outcome single = testing::shell(step_on(name, 0));
      EXPECT_EQ(single.exit_code, 0) << single.output;
      r.alone = std::min(r.alone, step_ms(single.output));
      r.hosts = std::min(r.hosts, at_once(step_on(name, 0), step_on(name, 1)));
      r.cores = std::min(r.cores, at_once("taskset -c 0 " + bare, "taskset -c 1 " + bare));
    }
    r.stolen_s = stolen_seconds() - stolen_before;
    r.throttled = throttled_periods() - throttled_before;
    std::printf("LeNet-5 step, batch 42, 1 thread: %.2f ms alone on a host; at once %.2f ms on two hosts, %.2f ms on "
                "two cores without emulation (stolen %.2f s, hosts throttled in %ld periods)\n",
                r.alone, r.hosts, r.cores, r.stolen_s, r.throttled);
    return r;
  };
  // Within 1-3 % in most runs; this virtual machine's stolen time once put one try 27 % apart, and
  // a CI machine once kept the hosts 39 % behind for a whole round: up to three rounds, and the
  // hosts must hold in one of them (a cost of the emulation itself would miss in all three).
  Round r = measure_round();
  for (int extra = 0; extra < 2 && !r.holds() && !HasFailure(); ++extra) r = measure_round();
  ASSERT_GT(r.alone, 0);
  ASSERT_GT(r.cores, 0);
  EXPECT_LT(r.hosts, 1.3 * r.cores) << "the hosts cost each other more than two cores of this machine do";
  // Hosts sharing one core take twice as long: far beyond what two cores' shared caches explain.
  EXPECT_LT(r.hosts, 1.5 * r.alone);
}

TEST_F(ClusterCompute, AHalfCoreHostGetsHalfACoreForABusyLoop) {
  const std::string name = unique_name();
  up(name, 1, "none", "--cores-per-host 0.5");
  // `times` prints the shell's own and its children's user and system time, the loop's second line.
  const Outcome r = testing::dtbench(
      "cluster exec " + name + " 0 -- sh -c 'timeout 3 sh -c \"while :; do :; done\"; times'");
  std::smatch match;
  const std::regex children(R"(\n(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$)");
  ASSERT_TRUE(std::regex_search(r.output, match, children)) << r.output;
  const double cpu_seconds = 60 * std::stod(match[1]) + std::stod(match[2]) + 60 * std::stod(match[3]) + std::stod(match[4]);
  std::printf("busy loop on a 0.5-core host: %.2f core(s)\n", cpu_seconds / 3.0);
  EXPECT_NEAR(cpu_seconds / 3.0, 0.5, 0.1) << r.output;
}

TEST_F(ClusterCompute, DoctorFailsRanksOfTwoHostsPinnedToOneCoreNamingBothHosts) {
  const std::string name = unique_name();
  const fs::path dir = up(name, 2, "10gbit", "--cpuset 0");  // every host on core 0, a whole core each
  const Outcome doctor = testing::shell(fmt::format(
      "timeout 60 {} --mca mca_param_files {}/mca-params.conf --hostfile {}/hostfile --bind-to core -np 2 {} doctor "
      "--timeout-s 5",
      MPIEXEC, dir.string(), dir.string(), DTBENCH_BINARY));
  EXPECT_NE(doctor.exit_code, 0) << doctor.output;
  const std::string both = fmt::format("hosts {}-h0, {}-h1", name, name);
  for (int host = 0; host < 2; ++host) {
    EXPECT_NE(doctor.output.find(fmt::format("(host {}-h{}, local rank 0): FAIL", name, host)), std::string::npos)
        << doctor.output;
  }
  EXPECT_NE(doctor.output.find("pinned to core 0, as are ranks of " + both), std::string::npos) << doctor.output;
}

TEST_F(ClusterCompute, DoctorShowsEachRanksCoresAndPassesHostsOnCoresOfTheirOwn) {
  if (cluster::allowed_cpus().size() < 2) GTEST_SKIP() << "needs two cores";
  const std::string name = unique_name();
  const fs::path dir = up(name, 2, "10gbit");
  const Outcome doctor = run_doctor(dir, 2);
  EXPECT_EQ(doctor.exit_code, 0) << doctor.output;
  EXPECT_NE(doctor.output.find("cores 0 quota 1"), std::string::npos) << doctor.output;
  EXPECT_NE(doctor.output.find("cores 1 quota 1"), std::string::npos) << doctor.output;
}

// `cluster up --spread`: hosts of half a core each where the machine has a core for each get a core
// each, so they run at once (side by side both are on core 0 and take turns), and a filler beside
// each on the half it leaves.
TEST_F(ClusterCompute, SpreadHalfCoreHostsGetACoreEachWithAFillerBesideEach) {
  if (cluster::allowed_cpus().size() != 2) GTEST_SKIP() << "laid out for two cores";
  const std::string name = unique_name();
  const fs::path dir = up(name, 2, "10gbit", "--cores-per-host 0.5 --spread");
  const Outcome doctor = run_doctor(dir, 2);
  EXPECT_EQ(doctor.exit_code, 0) << doctor.output;
  EXPECT_NE(doctor.output.find("cores 0 quota 0.5"), std::string::npos) << doctor.output;
  EXPECT_NE(doctor.output.find("cores 1 quota 0.5"), std::string::npos) << doctor.output;
  EXPECT_EQ(cluster::filler_processes(name, 0).size(), 1u) << "no filler on core 0";
  EXPECT_EQ(cluster::filler_processes(name, 1).size(), 1u) << "no filler on core 1";
}

// Hosts on cores of their own: a rank polling for a message no longer keeps the other host's rank,
// or the softirq delivering the message, off its core, so a small allreduce takes the link's time
// without yielding ranks. (When every host's rank was pinned to core 0, each message between the
// hosts arrived a scheduler tick late: a 4 KiB allreduce took 8 ms on any link. Hosts that share a
// core by design, 3 hosts on 2 cores, still need `-x OMPI_MCA_mpi_yield_when_idle=1`:
// docs/cluster.md, "Time small messages with yielding ranks".)
TEST_F(ClusterCompute, SmallAllreducesAcrossHostsOfTheirOwnCoresTakeTheLinksTimeNotTheSchedulersTick) {
  if (cluster::allowed_cpus().size() < 2) GTEST_SKIP() << "needs two cores, one per host";
  const std::string name = unique_name();
  const fs::path dir = up(name, 2, "10gbit");
  const fs::path json = root_ / "small.json";
  const Outcome bench = bench_allreduce(dir, 2, "4KiB", json);
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  const auto rows = testing::read_json(json)["rows"];
  ASSERT_EQ(rows.size(), 1u);
  for (const char* algorithm : {"ring", "mpi"}) {
    const double p50_us = rows[0][algorithm]["p50_us"].get<double>();
    std::printf("4 KiB allreduce across 2 hosts, %s: median %.0f us\n", algorithm, p50_us);
    EXPECT_LT(p50_us, 3000.0) << algorithm << ": " << bench.output;
  }
}

// 3 half-core hosts on 2 cores: host 2 alone on core 1 with half of it to spare. Its ranks poll
// while they wait (yielding, as the cluster's rsh agent tells them, to nobody on that core), so
// without a neighbour it spends its quota in the first half of every 10 ms and is held for the
// rest. The filler on core 1's spare half takes the core only when host 2 gives it away. Judged by
// what the filler changes, in one run, not by a time fixed on one CPU: the ring's 248 KB allreduce
// took 2.97 ms at the median on a Zen 5 EPYC with the filler (5.95 without; 2.65 at the link's
// rate), 3.5-4.9 on a Zen 3 (6.5-8.2 without); there host 2 was held in 3-35 % of its periods
// with the filler (mpirun's start-up polls too), 76-83 % without.
TEST_F(ClusterCompute, AHalfCoreHostWithACoreToSpareIsNotHeldWhileItsRanksPoll) {
  if (cluster::allowed_cpus().size() != 2) GTEST_SKIP() << "laid out for two cores";
  const std::string name = unique_name();
  const fs::path dir = up(name, 3, "1gbit", "--cores-per-host 0.5");
  const std::vector<pid_t> filler = cluster::filler_processes(name, 0);
  ASSERT_EQ(filler.size(), 1u) << "no filler on core 1";
  struct Bench {
    double ring_us = 0, mpi_us = 0, held = 0;  // held: host 2's periods throttled, a share of those that passed
  };
  const fs::path host2_stat = cluster::host_cgroup_dirs(name, 2).front() / "cpu.stat";
  const auto bench_lone_host = [&](const char* what) {
    const long periods = cgroup_counter(host2_stat, "nr_periods"), throttled = cgroup_counter(host2_stat, "nr_throttled");
    const fs::path json = root_ / "lone.json";
    const Outcome bench = bench_allreduce(dir, 3, "248256", json);
    EXPECT_EQ(bench.exit_code, 0) << bench.output;
    const auto rows = testing::read_json(json)["rows"];
    EXPECT_EQ(rows.size(), 1u) << bench.output;
    // at(): a missing row throws, failing the test, where [] on a const document is undefined.
    Bench b{.ring_us = rows.at(0).at("ring").at("p50_us").get<double>(),
            .mpi_us = rows.at(0).at("mpi").at("p50_us").get<double>()};
    const long passed = cgroup_counter(host2_stat, "nr_periods") - periods;
    b.held = passed > 0 ? static_cast<double>(cgroup_counter(host2_stat, "nr_throttled") - throttled) / passed : 1.0;
    std::printf("248 KB allreduce across 3 half-core hosts, %s: median ring %.0f us, mpi %.0f us; host 2 held in "
                "%.0f %% of its periods\n", what, b.ring_us, b.mpi_us, 100 * b.held);
    return b;
  };
  const Bench with_filler = bench_lone_host("beside the filler");
  ASSERT_EQ(kill(filler.front(), SIGSTOP), 0);
  const Bench alone = bench_lone_host("the filler stopped");
  ASSERT_EQ(kill(filler.front(), SIGCONT), 0);
  EXPECT_LT(with_filler.held, 0.6 * alone.held) << "host 2 spent its quota polling, then waited for the next period";
  EXPECT_GT(alone.held, 1.0 / 2) << "without the filler host 2 should be held: the bench no longer polls?";
  EXPECT_LT(with_filler.ring_us, 0.8 * alone.ring_us);
  EXPECT_LT(with_filler.mpi_us, 0.8 * alone.mpi_us);
  ASSERT_EQ(testing::dtbench("cluster down " + name).exit_code, 0);
  // Gone, or dead and waiting for init to reap it (state Z).
  const auto running = [](pid_t pid) {
    std::ifstream stat(fmt::format("/proc/{}/stat", pid));
    std::string id, command, state;
    return static_cast<bool>(stat >> id >> command >> state) && state != "Z";
  };
  for (const pid_t pid : filler) EXPECT_FALSE(running(pid)) << "the filler outlived its cluster";
}

}  // namespace
}  // namespace dtbench
