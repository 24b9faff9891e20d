#include "launch/cluster/cluster.h"

#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "launch/cluster/cluster_files.h"
#include "launch/cluster/host_cgroups.h"
#include "launch/cluster/naming.h"
#include "launch/cluster/slurm_daemons.h"

namespace dtbench::cluster {

namespace fs = std::filesystem;

namespace {

void validate(const UpOptions& o) {
  validate_name(o.name);
  if (o.hosts < 1 || o.hosts > kMaxHosts) fail_input("--hosts {}: expected 1 to {}", o.hosts, kMaxHosts);
  if (o.slots_per_host < 1) fail_input("--slots {}: expected at least 1", o.slots_per_host);
  parse_link_rate(o.link_rate);
  plan_host_cores(o.hosts, o.cores_per_host, allowed_cpus(), o.cpuset, o.spread);
  if (o.owner_pid != 0 && !ProcessId::of(o.owner_pid).alive()) fail_input("--owner-pid {}: no such process", o.owner_pid);
  if (o.slurm) require_slurm_installed();
}

// The cgroups first: a frozen host's processes must be thawed before anything can end them. That
// ends Slurm's daemons too (they run on the hosts); stop_slurm then takes their folder.
void remove_everything(const ClusterRecord& r) {
  remove_host_cgroups(r.name);
  if (r.slurm) stop_slurm(r);
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
  const CoresPlan cores = plan_host_cores(o.hosts, o.cores_per_host, allowed_cpus(), o.cpuset, o.spread);
  r.cores_per_host = cores.hosts.front().cores;
  for (const HostCores& host : cores.hosts) r.host_cpus.push_back(host.cpus);
  r.time_sliced = cores.time_sliced;
  for (const HostCores& filler : cores.fillers) {
    r.filler_cpus.push_back(filler.cpus);
    r.filler_cores.push_back(filler.cores);
  }
  r.dir = fs::absolute(o.dir.empty() ? fs::path("/tmp/dtbench-cluster-" + o.name) : o.dir);
  r.dir_created = !fs::exists(r.dir);
  r.builder = ProcessId::of(getpid());
  r.slurm = o.slurm;
  if (o.owner_pid != 0) r.owner = ProcessId::of(o.owner_pid);
  write_record(r);
  return r;
}

}  // namespace

ClusterRecord up(const UpOptions& o) {
  validate(o);
  require_net_admin("dtbench cluster up");
  require_cgroups("dtbench cluster up");
  ClusterRecord r = claim(o);
  if (r.time_sliced) {
    spdlog::warn("cluster {}: {} hosts x {:.3g} core(s) is more than the cores they run on: the hosts take turns, "
                 "so none is sure of its share", r.name, r.hosts, r.cores_per_host);
  }
  try {
    fs::create_directories(r.dir);
    write_cluster_files(r);
    for (int host = 0; host < r.hosts; ++host) {
      make_host_cgroup(r.name, host, {r.host_cpus[static_cast<size_t>(host)], r.cores_per_host});
    }
    for (size_t k = 0; k < r.filler_cpus.size(); ++k) {
      start_filler(r.name, static_cast<int>(k), {r.filler_cpus[k], r.filler_cores[k]});
    }
    build_network(r);
    if (r.slurm) start_slurm(r);
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
  std::string text = fmt::format("cluster {}: {} host(s) x {} slot(s) x {:.3g} core(s){}, subnet {}, bridge {} ({}), "
                                 "link {}{}\n",
                                 r.name, r.hosts, r.slots_per_host, r.cores_per_host,
                                 r.time_sliced ? " (time-sliced: more than the cores they run on)" : "", subnet(r.slot),
                                 bridge_name(r.name), bridge_address(r.slot), r.link_rate,
                                 r.complete ? "" : " (being built)");
  text += fmt::format("  directory {}{}\n", r.dir.string(),
                      r.owner.pid > 0 ? fmt::format(", removed when pid {} ends", r.owner.pid) : std::string());
  const std::vector<HostStatus> hosts = host_status(r);
  for (const HostStatus& h : hosts) {
    text += fmt::format("  {:<12} {:<15} namespace {} veth {}", h.host, h.address, h.namespace_name, h.veth);
    const size_t host = static_cast<size_t>(&h - hosts.data());
    if (host < r.host_cpus.size()) {
      text += fmt::format("  cores {} quota {:.3g}{}", r.host_cpus[host], r.cores_per_host,
                          h.present && host_frozen(r.name, static_cast<int>(host)) ? " FROZEN" : "");
    }
    text += h.present ? fmt::format("  in: {}  out: {}\n", h.shaping_in, h.shaping_out) : "  MISSING\n";
  }
  for (size_t k = 0; k < r.filler_cpus.size() && k < r.filler_cores.size(); ++k) {
    const std::vector<pid_t> running = r.complete ? filler_processes(r.name, static_cast<int>(k)) : std::vector<pid_t>{};
    text += fmt::format("  {:<12} cores {} quota {:.3g}, the part no host is promised: yields to any host that wants "
                        "it{}\n", filler_name(r.name, static_cast<int>(k)), r.filler_cpus[k], r.filler_cores[k],
                        r.complete && running.empty() ? " MISSING" : "");
  }
  if (r.slurm && r.complete) text += describe_slurm(r);
  return text;
}

void freeze(const std::string& name, const std::string& host, bool frozen) {
  require_net_admin(frozen ? "dtbench cluster freeze" : "dtbench cluster thaw");
  const ClusterRecord r = find(name);
  if (!r.complete) fail_input("cluster {} is still being built", name);
  const int index = host_index(r, host);
  // A hung machine's kernel answers nothing either: with only its processes stopped, the host's
  // TCP would still acknowledge mpirun's keepalive probes, and mpirun, told to end the job, would
  // wait for the stopped daemon for ever. Silenced, the host is declared lost within seconds.
  if (frozen) {
    set_host_frozen(r.name, index, true);
    set_host_link_up(r.name, index, false);
  } else {
    set_host_link_up(r.name, index, true);
    set_host_frozen(r.name, index, false);
  }
}

}  // namespace dtbench::cluster
