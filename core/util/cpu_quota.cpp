#include "core/util/cpu_quota.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/util/error.h"
#include "core/util/files.h"

namespace dtbench {

namespace fs = std::filesystem;

constexpr const char* kCgroupRoot = "/sys/fs/cgroup";

std::string read_cgroup_value(const fs::path& path) {
  std::string s = read_file(path).value_or("");
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<CpuCgroup> own_cpu_cgroup() {
  // Where v1 hierarchies are mounted, the unified line ("0::/...") holds no controller of theirs.
  const bool unified = cgroups_unified_only();
  std::ifstream cgroups("/proc/self/cgroup");
  for (std::string line; std::getline(cgroups, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const bool cpu = unified ? controllers.empty() : ("," + controllers + ",").find(",cpu,") != std::string::npos;
    if (cpu) return CpuCgroup{controllers, fs::path(line.substr(second + 1)).relative_path()};
  }
  return std::nullopt;
}

double v1_quota_cores(const fs::path& dir) {
  const std::string quota = read_cgroup_value(dir / "cpu.cfs_quota_us"), period = read_cgroup_value(dir / "cpu.cfs_period_us");
  if (quota.empty() || period.empty() || quota == "-1" || std::stod(period) <= 0) return 0;
  return std::stod(quota) / std::stod(period);
}

double v2_quota_cores(const fs::path& dir) {
  std::stringstream max(read_cgroup_value(dir / "cpu.max"));
  std::string quota;
  double period = 0;
  if (!(max >> quota >> period) || quota == "max" || period <= 0) return 0;
  return std::stod(quota) / period;
}

double least_quota_cores(const fs::path& mount, fs::path dir, bool unified) {
  double least = 0;
  for (;; dir = dir.parent_path()) {
    const double cores = unified ? v2_quota_cores(dir) : v1_quota_cores(dir);
    if (cores > 0) least = least > 0 ? std::min(least, cores) : cores;
    if (dir.string().size() <= mount.string().size() + 1) return least;
  }
}

std::optional<fs::path> v1_mount(const std::string& controller) {
  std::ifstream mounts("/proc/mounts");
  for (std::string device, point, type, options, rest; mounts >> device >> point >> type >> options;) {
    std::getline(mounts, rest);
    if (type != "cgroup") continue;
    std::stringstream list(options);
    for (std::string option; std::getline(list, option, ',');) {
      if (option == controller) return fs::path(point);
    }
  }
  return std::nullopt;
}

bool cgroups_unified_only() { return fs::exists(fs::path(kCgroupRoot) / "cgroup.controllers"); }

std::optional<double> readable_quota_cores(const CpuCgroup& cgroup) {
  if (cgroup.controllers.empty() && cgroups_unified_only()) {
    const fs::path root(kCgroupRoot);
    return least_quota_cores(root, root / cgroup.path, /*unified=*/true);
  }
  if (const auto mount = v1_mount("cpu"); mount && !cgroup.controllers.empty()) {
    return least_quota_cores(*mount, *mount / cgroup.path, /*unified=*/false);
  }
  return std::nullopt;
}

std::optional<double> told_cpu_quota_cores() {
  const char* text = std::getenv("DTBENCH_CPU_QUOTA_CORES");
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  const double cores = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(cores > 0)) {
    fail_input("DTBENCH_CPU_QUOTA_CORES is '{}': expected a positive number of cores (0.5 for half a core)", text);
  }
  return cores;
}

double process_cpu_quota_cores() {
  static const double cores = [] {
    if (const auto told = told_cpu_quota_cores()) return *told;
    const auto cgroup = own_cpu_cgroup();
    return cgroup ? readable_quota_cores(*cgroup).value_or(0.0) : 0.0;
  }();
  return cores;
}

}  // namespace dtbench
