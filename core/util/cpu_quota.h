#pragma once
// The CPU quota a process runs under — a container's CPU limit, or a host of half a core in
// dtbench's emulated cluster — read from its cgroup (v1 `cpu` or v2). It matters to a waiting
// thread: one that spins or yields while it waits spends the quota its computation needs, where
// on a core of its own it would cost nothing (allreduce/request_wait.h).
#include <filesystem>
#include <optional>
#include <string>

namespace dtbench {

// The process's cgroup in the hierarchy holding the `cpu` controller, as /proc/self/cgroup names
// it: "3:cpu,cpuacct:/a/b" (v1, controllers "cpu,cpuacct") or "0::/a/b" (v2, controllers "").
struct CpuCgroup {
  std::string controllers;
  std::filesystem::path path;  // relative to its hierarchy's root: "a/b"
};
std::optional<CpuCgroup> own_cpu_cgroup();

// A cgroup file's one value without its newline; "" when it cannot be read.
std::string read_cgroup_value(const std::filesystem::path& path);

// One cgroup's quota in cores, 0 for none: v1 from cpu.cfs_quota_us / cpu.cfs_period_us (-1: none),
// v2 from cpu.max ("max 100000": none; "50000 100000": 0.5).
double v1_quota_cores(const std::filesystem::path& dir);
double v2_quota_cores(const std::filesystem::path& dir);

// The least quota of `dir` and its parents up to the hierarchy's root `mount` (0: none): a limit
// set on a parent (a container's, a pod's) binds every cgroup beneath it.
double least_quota_cores(const std::filesystem::path& mount, std::filesystem::path dir, bool unified);

// Where the v1 hierarchy holding `controller` is mounted ("cpu" may share one with cpuacct), and
// whether only the unified (v2) hierarchy is mounted.
std::optional<std::filesystem::path> v1_mount(const std::string& controller);
bool cgroups_unified_only();

// The quota of `cgroup` as its hierarchy says (0: none), or nullopt when the hierarchy is not
// mounted where this process can see it — as inside a network namespace entered with `ip netns
// exec`, which mounts a /sys of its own without the cgroups.
std::optional<double> readable_quota_cores(const CpuCgroup& cgroup);

// DTBENCH_CPU_QUOTA_CORES, where set: the emulated cluster's hosts are told their quota, since
// their /sys hides it. InputError naming the variable when it is not a positive number.
std::optional<double> told_cpu_quota_cores();

// What this process runs under, in cores (0: no quota): the quota it was told, else its cgroup's.
// Read once.
double process_cpu_quota_cores();

}  // namespace dtbench
