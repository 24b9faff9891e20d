#include "launch/cluster/cluster.h"

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "launch/cluster/cluster_files.h"
#include "launch/cluster/naming.h"

namespace dtbench::cluster {

namespace fs = std::filesystem;

namespace {

void validate(const UpOptions& o) {
  validate_name(o.name);
  if (o.hosts < 1 || o.hosts > kMaxHosts) fail_input("--hosts {}: expected 1 to {}", o.hosts, kMaxHosts);
  if (o.slots_per_host < 1) fail_input("--slots {}: expected at least 1", o.slots_per_host);
  parse_link_rate(o.link_rate);
  if (o.owner_pid != 0 && !ProcessId::of(o.owner_pid).alive()) fail_input("--owner-pid {}: no such process", o.owner_pid);
}

void remove_everything(const ClusterRecord& r) {
  remove_network(r.name, r.hosts);
  remove_cluster_files(r);
  remove_record(r.name);
}

std::vector<std::string> reap_locked() {
  std::vector<std::string> reaped;
  for (const ClusterRecord& r : read_records()) {
    if (!r.abandoned()) continue;
    spdlog::warn("removing cluster {}: {}", r.name,
                 r.complete ? fmt::format("its owner (pid {}) is gone", r.owner.pid)
                            : fmt::format("the cluster up building it (pid {}) is gone", r.builder.pid));
    remove_everything(r);
    reaped.push_back(r.name);
  }
  return reaped;
}

// Under the registry lock: a record for the new cluster, before anything is built.
ClusterRecord claim(const UpOptions& o) {
  RegistryLock lock;
  reap_locked();
  if (const auto existing = read_record(o.name)) {
    fail_input("cluster '{}' exists already (directory {}); `dtbench cluster down {}` removes it", o.name,
               existing->dir.string(), o.name);
  }
  ClusterRecord r;
  r.name = o.name;
  r.slot = free_slot(read_records());
  r.hosts = o.hosts;
  r.slots_per_host = o.slots_per_host;
  r.link_rate = o.link_rate;
  r.dir = fs::absolute(o.dir.empty() ? fs::path("/tmp/dtbench-cluster-" + o.name) : o.dir);
  r.dir_created = !fs::exists(r.dir);
  r.builder = ProcessId::of(getpid());
  if (o.owner_pid != 0) r.owner = ProcessId::of(o.owner_pid);
  write_record(r);
  return r;
}

}  // namespace

ClusterRecord up(const UpOptions& o) {
  validate(o);
  require_net_admin("dtbench cluster up");
  ClusterRecord r = claim(o);
  try {
    fs::create_directories(r.dir);
    write_cluster_files(r);
    build_network(r);
    r.complete = true;
    write_record(r);
  } catch (...) {
    try {
      remove_everything(r);
    } catch (const std::exception& error) {
      spdlog::error("cluster {}: cleaning up after a failed up: {}", r.name, error.what());
    }
    throw;
  }
  return r;
}

void down(const std::string& name) {
  validate_name(name);
  require_net_admin("dtbench cluster down");
  RegistryLock lock;
  reap_locked();
  const auto record = read_record(name);
  if (!record) fail_input("no cluster '{}' (see dtbench cluster status)", name);
  remove_everything(*record);
}

std::vector<std::string> reap_abandoned() {
  RegistryLock lock;
  return reap_locked();
}

ClusterRecord find(const std::string& name) {
  validate_name(name);
  if (auto record = read_record(name)) return *record;
  std::string names;
  for (const auto& r : read_records()) names += (names.empty() ? "" : ", ") + r.name;
  fail_input("no cluster '{}' (clusters: {})", name, names.empty() ? "none" : names);
}

int host_index(const ClusterRecord& r, const std::string& host) {
  for (int i = 0; i < r.hosts; ++i) {
    if (host == std::to_string(i) || host == host_name(r.name, i) || host == host_address(r.slot, i)) return i;
  }
  fail_input("cluster {} has no host '{}': expected 0..{}, a host name ({}-h0 ..) or an address ({} ..)", r.name,
             host, r.hosts - 1, r.name, host_address(r.slot, 0));
}

std::string describe(const ClusterRecord& r) {
  std::string text = fmt::format("cluster {}: {} host(s) x {} slot(s), subnet {}, bridge {} ({}), link {}{}\n",
                                 r.name, r.hosts, r.slots_per_host, subnet(r.slot), bridge_name(r.name),
                                 bridge_address(r.slot), r.link_rate, r.complete ? "" : " (being built)");
  text += fmt::format("  directory {}{}\n", r.dir.string(),
                      r.owner.pid > 0 ? fmt::format(", removed when pid {} ends", r.owner.pid) : std::string());
  for (const HostStatus& h : host_status(r)) {
    text += fmt::format("  {:<12} {:<15} namespace {} veth {}", h.host, h.address, h.namespace_name, h.veth);
    text += h.present ? fmt::format("  in: {}  out: {}\n", h.shaping_in, h.shaping_out) : "  MISSING\n";
  }
  return text;
}

}  // namespace dtbench::cluster
