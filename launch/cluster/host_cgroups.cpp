#include "launch/cluster/host_cgroups.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/cpu_quota.h"
#include "core/util/error.h"
#include "launch/cluster/naming.h"

namespace dtbench::cluster {

namespace fs = std::filesystem;

namespace {

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";
// A fractional host's quota is a share of each 10 ms, not of CFS's default 100 ms: a host of half a
// core that has a core to itself (3 such hosts on 2 cores) ran flat out for 50 ms and was then held
// for 50 — steps of 15 ms stalled up to 66 ms (p95) and the 3-host step came out twice the 2- and
// 4-host ones. With 10 ms the stalls are at most 5 ms and the host runs like a slower one (LeNet-5
// ring on 3 half-core hosts: mean 29.7 ms, p95 66 -> mean 19.8, p95 22.6; docs/cluster.md). Hosts
// of whole cores keep 100 ms: their cpuset bounds them already, and a short period only adds
// throttling at its edges (867 throttled periods in ClusterCompute's run with 10 ms, 0 with 100).
constexpr long kFractionalPeriodMicroseconds = 10000;
constexpr long kWholePeriodMicroseconds = 100000;

long period_microseconds(double cores) {
  return cores == std::floor(cores) ? kWholePeriodMicroseconds : kFractionalPeriodMicroseconds;
}
constexpr auto kSettleTime = std::chrono::seconds(5);

constexpr const char* kV1Controllers[] = {"cpu", "cpuset", "freezer"};

// Cgroup files take one write each; the kernel's error (EINVAL for a core it lacks, EBUSY for a
// cgroup in use) is the message.
void write_text(const fs::path& path, const std::string& value) {
  std::ofstream out(path);
  out << value << std::flush;
  if (!out) throw IoError(fmt::format("cannot write '{}' to {}: {}", value, path.string(), std::strerror(errno)));
}

void make_dir(const fs::path& dir) {
  std::error_code error;
  fs::create_directory(dir, error);
  if (error) throw IoError(fmt::format("cannot make cgroup {}: {}", dir.string(), error.message()));
}

std::string quota_text(double cores) {
  return std::to_string(std::max(1000L, std::lround(cores * static_cast<double>(period_microseconds(cores)))));
}

fs::path freezer_dir(const std::string& cluster, int host) {
  if (cgroups_unified_only()) return fs::path(kCgroupRoot) / namespace_name(cluster, host);
  const auto mount = v1_mount("freezer");
  if (!mount) throw IoError("no freezer cgroup hierarchy is mounted: cannot freeze a host");
  return *mount / namespace_name(cluster, host);
}

std::vector<pid_t> processes_of(const fs::path& dir) {
  std::vector<pid_t> pids;
  std::ifstream procs(dir / "cgroup.procs");
  for (pid_t pid = 0; procs >> pid;) pids.push_back(pid);
  return pids;
}

// Kills what is left in `dir` and removes it, waiting a few seconds for the processes to go.
void kill_and_remove(const fs::path& dir) {
  const auto deadline = std::chrono::steady_clock::now() + kSettleTime;
  for (;;) {
    for (const pid_t pid : processes_of(dir)) kill(pid, SIGKILL);
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY || std::chrono::steady_clock::now() > deadline) {
      throw IoError(fmt::format("cannot remove cgroup {}: {}", dir.string(), std::strerror(errno)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

void require_cgroups(const std::string& what) {
  if (cgroups_unified_only()) {
    const std::string controllers = read_cgroup_value(fs::path(kCgroupRoot) / "cgroup.controllers");
    for (const char* needed : {"cpu", "cpuset"}) {
      if ((" " + controllers + " ").find(std::string(" ") + needed + " ") == std::string::npos) {
        throw IoError(fmt::format("{} gives each host its own cores with cgroups, but cgroup v2's controllers here are "
                                  "'{}': {} is missing", what, controllers, needed));
      }
    }
    return;
  }
  for (const char* controller : kV1Controllers) {
    if (!v1_mount(controller)) {
      throw IoError(fmt::format("{} gives each host its own cores with cgroups, but no '{}' cgroup hierarchy is "
                                "mounted (cgroup v1 cpu, cpuset and freezer, or cgroup v2, are needed)", what, controller));
    }
  }
}

namespace {

// The directories of the cgroup `name`: one per v1 hierarchy, or the one v2 cgroup.
std::vector<fs::path> cgroup_dirs(const std::string& name) {
  if (cgroups_unified_only()) return {fs::path(kCgroupRoot) / name};
  std::vector<fs::path> dirs;
  for (const char* controller : kV1Controllers) {
    if (const auto mount = v1_mount(controller)) dirs.push_back(*mount / name);
  }
  return dirs;
}

void make_cgroup(const std::string& name, const HostCores& cores) {
  if (cgroups_unified_only()) {
    const fs::path root(kCgroupRoot);
    write_text(root / "cgroup.subtree_control", "+cpu +cpuset");
    const fs::path dir = root / name;
    make_dir(dir);
    write_text(dir / "cpuset.cpus", cores.cpus);
    write_text(dir / "cpu.max", quota_text(cores.cores) + " " + std::to_string(period_microseconds(cores.cores)));
    return;
  }
  const fs::path cpu = *v1_mount("cpu") / name, cpuset = *v1_mount("cpuset") / name;
  make_dir(cpu);
  write_text(cpu / "cpu.cfs_period_us", std::to_string(period_microseconds(cores.cores)));
  write_text(cpu / "cpu.cfs_quota_us", quota_text(cores.cores));
  make_dir(cpuset);
  // A v1 cpuset takes no process until it has memory nodes too: the machine's, as its root has them.
  write_text(cpuset / "cpuset.mems", read_cgroup_value(*v1_mount("cpuset") / "cpuset.mems"));
  write_text(cpuset / "cpuset.cpus", cores.cpus);
  make_dir(*v1_mount("freezer") / name);
}

// In the child of fork: only system calls, as the child of a process that may have threads must.
// Joins the cgroups `procs` (their cgroup.procs files), leaves this session and its output, and
// forks the filler (`argv`: this program's `cluster filler NAME K`), which the child's exit hands
// to init: the caller reaps only the child. Exits 1 where a cgroup would not take it.
[[noreturn]] void detach_filler(const std::vector<std::string>& procs, const std::vector<char*>& argv) {
  char pid_text[16];
  int length = 0;
  for (pid_t pid = getpid(); pid > 0; pid /= 10) pid_text[length++] = static_cast<char>('0' + pid % 10);
  for (int i = 0; i < length / 2; ++i) std::swap(pid_text[i], pid_text[length - 1 - i]);
  for (const std::string& path : procs) {
    const int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0 || write(fd, pid_text, static_cast<size_t>(length)) != length) _exit(1);
    close(fd);
  }
  setsid();
  const int null = open("/dev/null", O_RDWR);
  for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  const pid_t filler = fork();
  if (filler == 0) {
    execv("/proc/self/exe", argv.data());
    run_filler();  // named as this program, but a filler all the same
  }
  _exit(filler < 0 ? 1 : 0);
}

constexpr int kMaxFillers = 1024;  // one per core at most

// The cgroup directories of the cluster's fillers that exist: fillers are made in order from 0,
// so the first with none ends the list.
std::vector<fs::path> existing_filler_cgroups(const std::string& cluster) {
  std::vector<fs::path> found;
  for (int filler = 0; filler < kMaxFillers; ++filler) {
    const size_t before = found.size();
    for (const fs::path& dir : cgroup_dirs(filler_name(cluster, filler))) {
      if (fs::exists(dir)) found.push_back(dir);
    }
    if (found.size() == before) break;
  }
  return found;
}

}  // namespace

std::vector<fs::path> host_cgroup_dirs(const std::string& cluster, int host) {
  return cgroup_dirs(namespace_name(cluster, host));
}

void make_host_cgroup(const std::string& cluster, int host, const HostCores& cores) {
  make_cgroup(namespace_name(cluster, host), cores);
}

void start_filler(const std::string& cluster, int filler, const HostCores& cores) {
  const std::string name = filler_name(cluster, filler);
  make_cgroup(name, cores);
  std::vector<std::string> procs;
  for (const fs::path& dir : cgroup_dirs(name)) procs.push_back((dir / "cgroup.procs").string());
  std::vector<std::string> words = {"dtbench", "cluster", "filler", cluster, std::to_string(filler)};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child < 0) throw IoError(fmt::format("cannot start {}: fork: {}", name, std::strerror(errno)));
  if (child == 0) detach_filler(procs, argv);
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw IoError(fmt::format("cannot start {}: its process could not join its cgroups or fork", name));
  }
}

void run_filler() {
  for (;;) sched_yield();
}

std::vector<pid_t> filler_processes(const std::string& cluster, int filler) {
  return processes_of(cgroup_dirs(filler_name(cluster, filler)).front());
}

void remove_host_cgroups(const std::string& cluster) {
  for (int host = 0; host < kMaxHosts; ++host) {
    const std::vector<fs::path> dirs = host_cgroup_dirs(cluster, host);
    if (std::none_of(dirs.begin(), dirs.end(), [](const fs::path& d) { return fs::exists(d); })) continue;
    if (host_frozen(cluster, host)) set_host_frozen(cluster, host, false);
    for (const fs::path& dir : dirs) kill_and_remove(dir);
  }
  for (const fs::path& dir : existing_filler_cgroups(cluster)) kill_and_remove(dir);
}

void set_host_frozen(const std::string& cluster, int host, bool frozen) {
  const fs::path dir = freezer_dir(cluster, host);
  if (!fs::exists(dir)) throw IoError(fmt::format("host {} has no cgroup {}", host_name(cluster, host), dir.string()));
  if (cgroups_unified_only()) {
    write_text(dir / "cgroup.freeze", frozen ? "1" : "0");
  } else {
    write_text(dir / "freezer.state", frozen ? "FROZEN" : "THAWED");
  }
  const auto deadline = std::chrono::steady_clock::now() + kSettleTime;
  while (host_frozen(cluster, host) != frozen) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw IoError(fmt::format("host {} did not become {} within 5 s", host_name(cluster, host),
                                frozen ? "frozen" : "thawed"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool host_frozen(const std::string& cluster, int host) {
  const fs::path dir = freezer_dir(cluster, host);
  if (cgroups_unified_only()) return read_cgroup_value(dir / "cgroup.events").find("frozen 1") != std::string::npos;
  return read_cgroup_value(dir / "freezer.state") == "FROZEN";
}

std::vector<fs::path> existing_host_cgroups(const std::string& cluster) {
  std::vector<fs::path> found;
  for (int host = 0; host < kMaxHosts; ++host) {
    for (const fs::path& dir : host_cgroup_dirs(cluster, host)) {
      if (fs::exists(dir)) found.push_back(dir);
    }
  }
  const std::vector<fs::path> fillers = existing_filler_cgroups(cluster);
  found.insert(found.end(), fillers.begin(), fillers.end());
  return found;
}

namespace {

// The quota the cluster's record gave the host whose cgroup is `cgroup_path` ("/dtb-a-h1"), or 0.
double recorded_host_quota(const fs::path& cgroup_path) {
  const std::string leaf = cgroup_path.filename().string();
  for (const ClusterRecord& r : read_records()) {
    for (int host = 0; host < r.hosts; ++host) {
      if (leaf == namespace_name(r.name, host)) return r.cores_per_host;
    }
  }
  return 0;
}

}  // namespace

CpuAllowance this_process_allowance() {
  CpuAllowance allowance{.cpus = allowed_cpus()};
  if (const auto cgroup = own_cpu_cgroup()) {
    // Inside a host, /sys is its network namespace's own (ip netns exec mounts a fresh sysfs), with
    // no cgroup hierarchy to read: the host's quota is the one its cluster's record gave it.
    allowance.quota_cores = readable_quota_cores(*cgroup).value_or(
        cgroup->controllers.empty() ? 0.0 : recorded_host_quota(cgroup->path));
  }
  return allowance;
}

}  // namespace dtbench::cluster
