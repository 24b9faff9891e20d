#include "launch/cluster/whereabouts.h"

#include <sys/stat.h>

#include <numeric>

#include <fmt/format.h>

#include "launch/cluster/host_cgroups.h"
#include "launch/cluster/naming.h"
#include "launch/cluster/network.h"
#include "launch/cluster/registry.h"

namespace dtbench::cluster {

namespace {

// The same namespace: the same inode on the same (nsfs) device.
bool same_namespace(const std::string& path, const struct stat& own) {
  struct stat other {};
  return stat(path.c_str(), &other) == 0 && other.st_ino == own.st_ino && other.st_dev == own.st_dev;
}

// "tc htb rate 1gbit burst 31250, packets under 256 B first, packets <= 15625 B, each way"
std::string shaping_text(const std::string& link_rate) {
  const LinkRate rate = parse_link_rate(link_rate);
  if (!rate.shaped()) return "none";
  const LinkShaping shaping = link_shaping(rate);
  return fmt::format("tc htb rate {} burst {}, packets under {} B first, packets <= {} B, each way", rate.text,
                     shaping.bucket_bytes, kSmallPacketBytes, shaping.max_packet_bytes);
}

}  // namespace

std::optional<Whereabouts> this_host() {
  struct stat own {};
  if (stat("/proc/self/ns/net", &own) != 0) return std::nullopt;
  for (const ClusterRecord& r : read_records()) {
    for (int host = 0; host < r.hosts; ++host) {
      if (!same_namespace("/run/netns/" + namespace_name(r.name, host), own)) continue;
      return Whereabouts{.cluster = r.name,
                         .host = host,
                         .host_name = host_name(r.name, host),
                         .hosts = r.hosts,
                         .slots_per_host = r.slots_per_host,
                         .link_rate = r.link_rate,
                         .cpus = static_cast<size_t>(host) < r.host_cpus.size() ? r.host_cpus[static_cast<size_t>(host)] : "",
                         .cores = r.cores_per_host,
                         .time_sliced = r.time_sliced,
                         .filler_cores = std::accumulate(r.filler_cores.begin(), r.filler_cores.end(), 0.0),
                         .own = this_process_allowance()};
    }
  }
  return std::nullopt;
}

nlohmann::json to_json(const Whereabouts& w) {
  return {{"name", w.cluster}, {"host", w.host},          {"host_name", w.host_name},
          {"hosts", w.hosts},  {"slots", w.slots_per_host}, {"link", w.link_rate},
          {"shaping", shaping_text(w.link_rate)},
          {"host_cpus", w.cpus}, {"cores_per_host", w.cores}, {"time_sliced", w.time_sliced},
          {"filler_cores", w.filler_cores},
          {"process_cpus", format_cpu_list(w.own.cpus)}, {"process_quota_cores", w.own.quota_cores}};
}

}  // namespace dtbench::cluster
