#pragma once
// How an emulated cluster shares this machine's cores among its hosts: each host gets a cpuset
// (the cores it may run on) and a CFS quota (how much of them it may use), so that a host owns
// compute the way a VM owns its vCPUs. Pure functions: the split is tested without root;
// host_cgroups.h applies it.
#include <string>
#include <vector>

namespace dtbench::cluster {

// One host's share: the cores it may use (a kernel cpu list, "0", "0-1", "0,2") and its quota in
// cores (0.5: half of one core's time, across whichever of its cores it runs on).
struct HostCores {
  std::string cpus;
  double cores = 0.0;
  bool operator==(const HostCores&) const = default;
};

struct CoresPlan {
  std::vector<HostCores> hosts;
  // More cores promised than the machine has: the hosts take turns on the cores (each still
  // gets at most its quota), so none gets its share for sure.
  bool time_sliced = false;
  // The part of a core that fractional hosts on it leave unpromised (3 half-core hosts on 2
  // cores: half of core 1), taken by a neighbour that yields whenever a host wants the core
  // (host_cgroups.h's filler). Without one, a host with part of a core to spare spends its quota
  // flat out while its MPI ranks poll and is held for the rest of each period: the one half-core
  // host alone on core 1 of 3 was throttled in 313 of 397 periods, and the ring's 248 KB
  // allreduce took 5.95 ms against 3.02 with the neighbour (3.28 on 4 such hosts).
  std::vector<HostCores> fillers;
};

// The split for `hosts` hosts of `cores_per_host` cores each (0: the machine's cores / hosts) on
// the cores `machine_cpus` (ids, ascending). Hosts that fit are laid side by side on the cores in
// order, host i on [i*C, (i+1)*C), so whole-core hosts never share a core and fractional ones
// share only the cores their shares straddle; with `spread`, hosts of less than a core go one to a
// core while there are cores, host i on core floor(i * cores / hosts), where every core can hold
// its share of them (2 half-core hosts on 2 cores: a core each, and a filler beside each). When
// they do not fit, every host may run on every core and only its quota holds it back.
// `cpuset_override` (a cpu list, empty: none) puts every host on those cores instead. Fillers only
// where hosts are laid out and fit. InputError naming the option for a value out of range.
CoresPlan plan_host_cores(int hosts, double cores_per_host, const std::vector<int>& machine_cpus,
                          const std::string& cpuset_override = "", bool spread = false);

// "0-2,5" -> {0, 1, 2, 5}; InputError naming `what` and the value unless it is a valid list.
std::vector<int> parse_cpu_list(const std::string& text, const std::string& what);
// {0, 1, 2, 5} -> "0-2,5"
std::string format_cpu_list(const std::vector<int>& cpus);

// The cores this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

// What a process may use: its allowed cores and its CPU quota in cores (0 when unlimited).
struct CpuAllowance {
  std::vector<int> cpus;
  double quota_cores = 0.0;
  // Cores it can use at most: the quota, or the allowed cores when the quota is unlimited or larger.
  double usable_cores() const;
  std::string text() const;  // "cores 0-1, quota 0.5" / "cores 0-1, no quota"
};

}  // namespace dtbench::cluster
