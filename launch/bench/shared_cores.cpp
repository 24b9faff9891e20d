#include "launch/bench/shared_cores.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dtbench {

namespace {

// Quotas are kept to the microsecond of a 100 ms period; two halves must not read as more than one.
constexpr double kSlack = 0.01;

}  // namespace

std::vector<std::string> shared_core_problems(const std::vector<RankCores>& ranks) {
  std::vector<std::string> problems(ranks.size());
  // core -> host -> the ranks of that host pinned to that core alone
  std::map<int, std::map<std::string, std::vector<size_t>>> pinned;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].cpus.size() == 1) pinned[ranks[i].cpus.front()][ranks[i].host].push_back(i);
  }
  for (const auto& [core, hosts] : pinned) {
    if (hosts.size() < 2) continue;
    // What the hosts ask of the core: each host's quota (without one, the whole core).
    double asked = 0.0;
    std::vector<std::string> names;
    for (const auto& [host, members] : hosts) {
      double quota = 0.0;
      for (const size_t i : members) quota = std::max(quota, ranks[i].quota_cores > 0 ? std::min(ranks[i].quota_cores, 1.0) : 1.0);
      asked += quota;
      names.push_back(host);
    }
    if (asked <= 1.0 + kSlack) continue;
    for (const auto& [host, members] : hosts) {
      for (const size_t i : members) {
        problems[i] = fmt::format("pinned to core {}, as are ranks of hosts {}, which ask {:.2g} cores of it: the "
                                  "hosts do not own their compute",
                                  core, fmt::join(names, ", "), asked);
      }
    }
  }
  return problems;
}

}  // namespace dtbench
