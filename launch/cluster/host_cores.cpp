#include "launch/cluster/host_cores.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench::cluster {

namespace {

// Interval ends are computed in floating point: 3 hosts x 0.6667 must still end on core 2.
constexpr double kSlack = 1e-6;

int parse_cpu(const std::string& text, const std::string& what, const std::string& whole) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 4) {
    fail_input("{} '{}': expected a cpu list such as 0, 0-1 or 0,2", what, whole);
  }
  return std::stoi(text);
}

}  // namespace

std::vector<int> parse_cpu_list(const std::string& text, const std::string& what) {
  std::set<int> cpus;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t dash = item.find('-');
    const int first = parse_cpu(item.substr(0, dash), what, text);
    const int last = dash == std::string::npos ? first : parse_cpu(item.substr(dash + 1), what, text);
    if (last < first) fail_input("{} '{}': the range {} runs backwards", what, text, item);
    for (int cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
  }
  if (cpus.empty()) fail_input("{} '{}': expected a cpu list such as 0, 0-1 or 0,2", what, text);
  return {cpus.begin(), cpus.end()};
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t end = i;
    while (end + 1 < cpus.size() && cpus[end + 1] == cpus[end] + 1) ++end;
    if (!text.empty()) text += ',';
    text += end == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[end]);
    i = end + 1;
  }
  return text;
}

CoresPlan plan_host_cores(int hosts, double cores_per_host, const std::vector<int>& machine_cpus,
                          const std::string& cpuset_override, bool spread) {
  if (machine_cpus.empty()) throw IoError("this process may run on no core (sched_getaffinity is empty)");
  const double machine = static_cast<double>(machine_cpus.size());
  const double c = cores_per_host > 0 ? cores_per_host : machine / hosts;
  if (!std::isfinite(c) || c < 0.01 || c > machine + kSlack) {
    fail_input("--cores-per-host {}: expected more than 0.01 and at most this machine's {} core(s)", cores_per_host,
               machine_cpus.size());
  }
  CoresPlan plan;
  plan.time_sliced = hosts * c > machine + kSlack;
  if (!cpuset_override.empty()) {
    if (spread) fail_input("--spread with --cpuset {}: choose one (--cpuset puts every host on its cores)", cpuset_override);
    const std::vector<int> cpus = parse_cpu_list(cpuset_override, "--cpuset");
    for (const int cpu : cpus) {
      if (!std::binary_search(machine_cpus.begin(), machine_cpus.end(), cpu)) {
        fail_input("--cpuset {}: core {} is not one this process may use ({})", cpuset_override, cpu,
                   format_cpu_list(machine_cpus));
      }
    }
    if (c > static_cast<double>(cpus.size()) + kSlack) {
      fail_input("--cores-per-host {}: more than the {} core(s) of --cpuset {}", c, cpus.size(), cpuset_override);
    }
    // Every host on the same cores: they share them whenever their quotas add up to more.
    plan.time_sliced = hosts * c > static_cast<double>(cpus.size()) + kSlack;
    plan.hosts.assign(static_cast<size_t>(hosts), HostCores{format_cpu_list(cpus), c});
    return plan;
  }
  if (plan.time_sliced) {
    plan.hosts.assign(static_cast<size_t>(hosts), HostCores{format_cpu_list(machine_cpus), c});
    return plan;
  }
  // What each core has promised to the hosts laid on it; the rest of a core goes to a filler.
  std::vector<double> promised(machine_cpus.size(), 0.0);
  const auto cores = static_cast<int>(machine_cpus.size());
  if (spread && c < 1 - kSlack && std::ceil(static_cast<double>(hosts) / cores - kSlack) * c <= 1 + kSlack) {
    // Hosts of less than a core, spread so that as few as possible share one: host i on core
    // floor(i * cores / hosts).
    for (int host = 0; host < hosts; ++host) {
      const auto core = static_cast<size_t>(static_cast<long>(host) * cores / hosts);
      plan.hosts.push_back({std::to_string(machine_cpus[core]), c});
      promised[core] += c;
    }
  } else {
    // Side by side, host i on [i*c, (i+1)*c): whole-core hosts never share a core, and fractional
    // ones share only the cores their shares straddle.
    for (int host = 0; host < hosts; ++host) {
      const auto first = static_cast<size_t>(std::floor(host * c + kSlack));
      const auto end = std::min(static_cast<size_t>(std::ceil((host + 1) * c - kSlack)), machine_cpus.size());
      plan.hosts.push_back({format_cpu_list({machine_cpus.begin() + static_cast<long>(first),
                                             machine_cpus.begin() + static_cast<long>(end)}),
                            c});
      for (size_t core = first; core < end; ++core) {
        const auto begin = static_cast<double>(core);
        promised[core] += std::max(0.0, std::min(begin + 1, (host + 1) * c) - std::max(begin, host * c));
      }
    }
  }
  for (size_t core = 0; core < machine_cpus.size(); ++core) {
    if (promised[core] > kSlack && promised[core] < 1 - kSlack) {
      plan.fillers.push_back({std::to_string(machine_cpus[core]), 1 - promised[core]});
    }
  }
  return plan;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

double CpuAllowance::usable_cores() const {
  const auto allowed = static_cast<double>(cpus.size());
  return quota_cores > 0 ? std::min(quota_cores, allowed) : allowed;
}

std::string CpuAllowance::text() const {
  return fmt::format("cores {}, {}", format_cpu_list(cpus),
                     quota_cores > 0 ? fmt::format("quota {:.3g}", quota_cores) : std::string("no quota"));
}

}  // namespace dtbench::cluster
