#pragma once
// A host's compute: one cgroup per host, with the cpuset and CFS quota of its HostCores and a
// freezer, so that everything running "on" the host — mpirun's daemons and their ranks (through
// the rsh agent), `cluster exec`, a sweep's parameter servers — shares the host's cores and no
// other host's, and the whole host can be stopped at once. Mininet-HiFi's CPU bandwidth limits
// per virtual host, with cgroup v1 (cpu, cpuset and freezer hierarchies, as mounted here) or,
// where the machine has only the unified hierarchy, cgroup v2.
#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "launch/cluster/host_cores.h"
#include "launch/cluster/registry.h"

namespace dtbench::cluster {

// IoError naming what is missing unless this machine lets root make cpu, cpuset and freezer
// cgroups (v1 hierarchies under /sys/fs/cgroup/{cpu,cpuset,freezer}, or v2 with those controllers).
void require_cgroups(const std::string& what);

// The directories a process joins (by writing its pid to each one's cgroup.procs) to run on
// `host`: one per v1 hierarchy, or the one v2 cgroup.
std::vector<std::filesystem::path> host_cgroup_dirs(const std::string& cluster, int host);

// Makes host `host`'s cgroups with the cores `cores` says. On an error, what was made stays for
// remove_host_cgroups to take.
void make_host_cgroup(const std::string& cluster, int host, const HostCores& cores);
// Makes filler `filler`'s cgroups with `cores` and starts in them a process that yields the core
// whenever anything else wants it (sched_yield in a loop), detached from this one, its output
// closed: the neighbour host_cores.h's CoresPlan::fillers describes. It runs until
// remove_host_cgroups ends it.
void start_filler(const std::string& cluster, int filler, const HostCores& cores);
// The filler's process: yields the core, forever (`dtbench cluster filler NAME K`, which
// start_filler runs so that `ps` names it).
[[noreturn]] void run_filler();
// Ends every process left in the cluster's host and filler cgroups (thawing a frozen host first:
// a frozen process cannot die) and removes them; what is already gone is skipped.
void remove_host_cgroups(const std::string& cluster);

// Stops (or restarts) every process of the host at once, as a hung machine stops; returns when
// the kernel says they all are. IoError if that takes longer than a few seconds.
void set_host_frozen(const std::string& cluster, int host, bool frozen);
bool host_frozen(const std::string& cluster, int host);

// The host's and fillers' cgroups that exist now (for the leftovers check of tests, and status).
std::vector<std::filesystem::path> existing_host_cgroups(const std::string& cluster);
// The processes in filler `filler`'s cpu cgroup (its one yielding process while the cluster is up).
std::vector<pid_t> filler_processes(const std::string& cluster, int filler);

// This process's allowed cores (affinity) and CPU quota (its cpu cgroup, v1 or v2).
CpuAllowance this_process_allowance();

}  // namespace dtbench::cluster
