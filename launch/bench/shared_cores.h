#pragma once
// doctor's check that emulated hosts own their compute: ranks of different hosts confined to one
// and the same core, asking more of it than it has — what happens when each host's MPI daemon,
// believing it owns the machine, pins its first rank to "its" core 0. Hosts that were given
// halves of one core on purpose (4 hosts x 0.5 core on 2 cores) share it and pass.
#include <string>
#include <vector>

namespace dtbench {

struct RankCores {
  int rank = 0;
  std::string host;
  std::vector<int> cpus;     // the cores the rank may run on
  double quota_cores = 0.0;  // its cgroup's CPU quota in cores; 0: none
};

// Per rank (in the order given): why it fails the check, or "" when it passes.
std::vector<std::string> shared_core_problems(const std::vector<RankCores>& ranks);

}  // namespace dtbench
