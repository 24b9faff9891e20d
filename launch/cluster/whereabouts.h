#pragma once
// Which emulated host this process runs on, if any: its network namespace is compared with the
// namespaces of the clusters on record, so that a worker's report names the cluster, the host and
// the link shaping without anyone having to tell it (nothing in the transports knows).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace dtbench::cluster {

struct Whereabouts {
  std::string cluster;
  int host = 0;
  std::string host_name;
  int hosts = 0;
  int slots_per_host = 1;
  std::string link_rate;  // as the cluster was made: "1gbit", "none"
};

// nullopt outside any cluster on record (a real host, or the machine's own namespace).
std::optional<Whereabouts> this_host();
nlohmann::json to_json(const Whereabouts& where);

}  // namespace dtbench::cluster
