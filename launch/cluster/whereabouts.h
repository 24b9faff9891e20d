#pragma once
// Which emulated host this process runs on, if any: its network namespace is compared with the
// namespaces of the clusters on record, so that a worker's report names the cluster, the host and
// the link shaping without anyone having to tell it (nothing in the transports knows).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "launch/cluster/host_cores.h"

namespace dtbench::cluster {

struct Whereabouts {
  std::string cluster;
  int host = 0;
  std::string host_name;
  int hosts = 0;
  int slots_per_host = 1;
  std::string link_rate;  // as the cluster was made: "1gbit", "none"
  std::string cpus;       // the cores the host runs on ("1"), as its cgroup's cpuset says
  double cores = 0;       // the host's CPU quota in cores
  bool time_sliced = false;  // the cluster's hosts promise more cores than they run on
  double filler_cores = 0;   // the cores its fillers may take (host_cores.h): busy, but no host's
  CpuAllowance own;          // what this process was given: its affinity and its cgroup's quota
};

// nullopt outside any cluster on record (a real host, or the machine's own namespace).
std::optional<Whereabouts> this_host();
nlohmann::json to_json(const Whereabouts& where);

}  // namespace dtbench::cluster
