#include "launch/report/network.h"

#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "comm/transport_catalogue.h"

namespace dtbench {

namespace {

// Pairs are listed up to this many ranks (496 pairs); beyond, only how many take each path.
constexpr size_t kMostRanksWithPairs = 32;

// The bytes a rank's interfaces other than loopback carried: what crossed a link.
nlohmann::json link_traffic(const nlohmann::json& interfaces) {
  nlohmann::json links = nlohmann::json::object();
  if (!interfaces.is_object()) return links;
  for (const auto& [name, bytes] : interfaces.items()) {
    if (name != "lo") links[name] = bytes;
  }
  return links;
}

nlohmann::json rank_entry(const nlohmann::json& report) {
  const nlohmann::json network = report.value("network", nlohmann::json::object());
  nlohmann::json entry = {{"rank", report.value("rank", 0)},
                          {"host", report.value("/provenance/hostname"_json_pointer, std::string())},
                          {"interfaces", link_traffic(network.value("interfaces", nlohmann::json()))}};
  if (network.contains("cluster")) {
    entry["cluster_host"] = network["cluster"].value("host", 0);
    // The cores the worker was given, as its own affinity and cgroup quota said (0: no quota).
    const auto& cluster = network["cluster"];
    if (cluster.contains("process_cpus")) entry["cores"] = cluster["process_cpus"];
    if (cluster.contains("process_quota_cores")) entry["quota_cores"] = cluster["process_quota_cores"];
  }
  return entry;
}

}  // namespace

nlohmann::json network_json(const std::vector<nlohmann::json>& reports, const std::string& transport) {
  nlohmann::json network = {{"ranks", nlohmann::json::array()}};
  std::set<std::string> hosts;
  for (const auto& report : reports) {
    network["ranks"].push_back(rank_entry(report));
    hosts.insert(network["ranks"].back()["host"].get<std::string>());
    const auto own = report.value("network", nlohmann::json::object());
    if (own.contains("cluster") && !network.contains("cluster")) {
      network["cluster"] = own["cluster"];
      network["cluster"].erase("host");
      network["cluster"].erase("host_name");
      for (const char* per_host : {"host_cpus", "process_cpus", "process_quota_cores"}) network["cluster"].erase(per_host);
    }
  }
  network["hosts"] = hosts.size();
  // The ranks yield only if every one of them does (a rank that polls is what the reader must know of).
  for (const auto& report : reports) {
    const auto own = report.value("network", nlohmann::json::object());
    if (!own.contains("mpi_yield_when_idle")) continue;
    network["mpi_yield_when_idle"] = network.value("mpi_yield_when_idle", true) && own.value("mpi_yield_when_idle", false);
  }
  // Only the allreduce over MPI on the host has workers talk to each other (not to servers, not on a GPU's links).
  const TransportRow* row = find_transport_row(transport);
  if (row == nullptr || row->family != TransportFamily::MpiAllreduce) return network;
  std::map<std::string, int> paths;
  nlohmann::json pairs = nlohmann::json::array();
  const auto& ranks = network["ranks"];
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (size_t j = i + 1; j < ranks.size(); ++j) {
      const bool same = ranks[i]["host"] == ranks[j]["host"];
      const std::string path = same ? "shared memory" : "TCP";
      ++paths[path];
      if (ranks.size() <= kMostRanksWithPairs) {
        pairs.push_back({{"ranks", {ranks[i]["rank"], ranks[j]["rank"]}}, {"path", path}});
      }
    }
  }
  network["pair_paths"] = paths;
  if (ranks.size() <= kMostRanksWithPairs) network["pairs"] = pairs;
  return network;
}

std::string network_text(const nlohmann::json& network) {
  std::string text;
  if (network.contains("cluster")) {
    const auto& c = network["cluster"];
    const std::string cores =
        c.contains("cores_per_host")
            ? fmt::format(" x {:.3g} core(s){}", c.value("cores_per_host", 0.0),
                          c.value("time_sliced", false) ? " time-sliced (more than the machine has)" : "")
            : std::string();
    text += fmt::format("Network: emulated cluster {} ({} hosts x {} slots{}, link {}, shaping {})\n",
                        c.value("name", ""), c.value("hosts", 0), c.value("slots", 0), cores, c.value("link", ""),
                        c.value("shaping", ""));
  } else {
    text += fmt::format("Network: {} host(s)\n", network.value("hosts", 0));
  }
  if (network.contains("mpi_yield_when_idle")) {
    text += network.value("mpi_yield_when_idle", false)
                ? "  MPI ranks yield their core while they wait (mpi_yield_when_idle=1)\n"
                : "  MPI ranks poll while they wait (mpi_yield_when_idle=0)\n";
  }
  for (const auto& rank : network.value("ranks", nlohmann::json::array())) {
    std::vector<std::string> links;
    for (const auto& [name, bytes] : rank["interfaces"].items()) {
      links.push_back(fmt::format("{} sent {:.1f} MB, received {:.1f} MB", name,
                                  bytes.value("sent_bytes", 0.0) / 1e6, bytes.value("received_bytes", 0.0) / 1e6));
    }
    const double quota = rank.value("quota_cores", 0.0);
    const std::string cores =
        rank.contains("cores") ? fmt::format(" (cores {}, {})", rank.value("cores", ""),
                                             quota > 0 ? fmt::format("quota {:.3g}", quota) : std::string("no quota"))
                               : std::string();
    text += fmt::format("  rank {} on {}{}{}\n", rank.value("rank", 0), rank.value("host", ""), cores,
                        links.empty() ? std::string() : ": " + fmt::format("{}", fmt::join(links, "; ")));
  }
  if (network.contains("pairs")) {
    std::vector<std::string> pairs;
    for (const auto& p : network["pairs"]) {
      pairs.push_back(fmt::format("{}-{} {}", p["ranks"][0].get<int>(), p["ranks"][1].get<int>(), p["path"].get<std::string>()));
    }
    text += fmt::format("  rank pairs: {}\n", fmt::join(pairs, ", "));
  } else if (network.contains("pair_paths")) {
    std::vector<std::string> counts;
    for (const auto& [path, n] : network["pair_paths"].items()) counts.push_back(fmt::format("{} pairs {}", n.get<int>(), path));
    text += fmt::format("  rank pairs: {}\n", fmt::join(counts, ", "));
  }
  return text;
}

}  // namespace dtbench
