#include "launch/cluster/cluster_files.h"

#include <sys/stat.h>

#include <cmath>

#include <fmt/format.h>

#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/cluster/host_cgroups.h"
#include "launch/cluster/naming.h"

namespace dtbench::cluster {

namespace fs = std::filesystem;

namespace {
// Joins the host's cgroups ($1: their directories), then runs the command given as the remaining
// arguments. Before `ip netns exec`, which mounts the namespace's own /sys, without the cgroups.
constexpr const char* kJoinCgroups =
    "for g in $1; do echo $$ > \"$g/cgroup.procs\" || exit 125; done; shift; exec \"$@\"";
// Sets the host name ($0) in the fresh UTS namespace, then runs the command given as arguments.
constexpr const char* kSetHostName = "hostname \"$0\" && exec \"$@\"";

// The host's cgroup directories as one shell word ("/sys/fs/cgroup/cpu/dtb-a-h0 ...").
std::string cgroup_list(const ClusterRecord& r, int host) {
  std::string list;
  for (const auto& dir : host_cgroup_dirs(r.name, host)) {
    if (!list.empty()) list += ' ';
    list += dir.string();
  }
  return list;
}

// mpirun's connections to its daemons probe after 1 s of silence, every second, twice: a lost host
// is declared within kDaemonLossSeconds, sooner than a rank's comm.timeout_s (5 s and more) ends
// its run. It must be sooner: once a rank's abort has begun, mpirun's order to the lost host's
// daemon waits unacknowledged in its socket, which stops keepalive, and TCP retries for 15 minutes.
constexpr int kKeepaliveIdle = 1, kKeepaliveInterval = 1, kKeepaliveProbes = 2;
constexpr int kDaemonLossSeconds = kKeepaliveIdle + kKeepaliveInterval * kKeepaliveProbes;

std::string keepalive_lines(const char* prefix, const char* separator, const char* end) {
  std::string text;
  for (const auto& [name, value] : {std::pair{"oob_tcp_keepalive_time", kKeepaliveIdle},
                                    std::pair{"oob_tcp_keepalive_intvl", kKeepaliveInterval},
                                    std::pair{"oob_tcp_keepalive_probes", kKeepaliveProbes}}) {
    text += fmt::format("{}{}{}{}{}", prefix, name, separator, value, end);
  }
  return text;
}
}  // namespace

std::vector<std::string> cluster_file_names() { return {"hostfile", "rsh-agent", "mca-params.conf", "mpirun-args"}; }

std::string hostfile_text(const ClusterRecord& r) {
  std::string text = fmt::format("# dtbench cluster {}: {} host(s), link {}\n", r.name, r.hosts, r.link_rate);
  for (int host = 0; host < r.hosts; ++host) {
    text += fmt::format("{} slots={}\n", host_address(r.slot, host), r.slots_per_host);
  }
  return text;
}

bool hosts_share_cores(const ClusterRecord& r) {
  return r.time_sliced || r.cores_per_host != std::floor(r.cores_per_host);
}

// Where hosts share a core, the agent tells every MPI rank it starts to yield that core while it
// waits (docs/cluster.md, "Time small messages with yielding ranks"). Through the agent, not the
// MCA file: mpirun reads that file too, and crashed in its abort path with the setting; the agent
// reaches only the hosts' daemons and, through them, the ranks. A setting given to mpirun (`-x` or
// `--mca`) still wins over it.
//
// The agent also tells every process it starts the host's CPU quota, which the host's own /sys
// (ip netns exec mounts a fresh one) hides from it: dtbench's waits then sleep rather than spin
// under less than a core (allreduce/request_wait.h).
std::string yield_line(const ClusterRecord& r) {
  if (!hosts_share_cores(r)) return "";
  return fmt::format(
      "# Hosts of {0:.3g} core(s) share cores: a rank that polls while it waits spends its host's quota and keeps\n"
      "# the core from the softirq that delivers its message. The ranks yield instead.\n"
      "export OMPI_MCA_mpi_yield_when_idle=\"${{OMPI_MCA_mpi_yield_when_idle:-1}}\"\n"
      "# The host's quota, which its own /sys does not show: dtbench's waits sleep under less than a core.\n"
      "export DTBENCH_CPU_QUOTA_CORES={0:.6g}\n",
      r.cores_per_host);
}

std::string rsh_agent_text(const ClusterRecord& r) {
  std::string cases;
  for (int host = 0; host < r.hosts; ++host) {
    cases += fmt::format("  {}|{}) ns={} name={} cgroups='{}' ;;\n", host_address(r.slot, host),
                         host_name(r.name, host), namespace_name(r.name, host), host_name(r.name, host),
                         cgroup_list(r, host));
  }
  return fmt::format(
      "#!/bin/sh\n"
      "# The rsh agent of dtbench cluster {0}. mpirun calls it as ssh: `rsh-agent [options] HOST COMMAND...`;\n"
      "# it runs COMMAND with /bin/sh inside HOST's network namespace and cgroups (its cores), under the\n"
      "# host's own name.\n"
      "while [ $# -gt 0 ] && [ \"${{1#-}}\" != \"$1\" ]; do shift; done  # ssh options: none apply\n"
      "host=$1; shift\n"
      "case \"$host\" in\n{1}"
      "  *) echo \"dtbench cluster {0}: no host '$host'\" >&2; exit 255 ;;\n"
      "esac\n"
      "for g in $cgroups; do echo $$ > \"$g/cgroup.procs\" || {{ echo \"dtbench cluster {0}: cannot join $g\" >&2; exit 255; }}; done\n"
      "{2}"
      "exec ip netns exec \"$ns\" unshare --uts /bin/sh -c 'hostname \"$0\" && exec /bin/sh -c \"$*\"' \"$name\" \"$@\"\n",
      r.name, cases, yield_line(r));
}

std::string mca_params_text(const ClusterRecord& r) {
  return fmt::format(
      "# dtbench cluster {0}: mpirun --mca mca_param_files {1}/mca-params.conf --hostfile {1}/hostfile ...\n"
      "# TCP between hosts, shared memory (vader) between ranks of one host, only on the cluster's subnet.\n"
      "plm_rsh_agent = {1}/rsh-agent\n"
      "# No binding: each host's daemon sees the whole machine and would pin its first rank to core 0,\n"
      "# every host's to the same core. The host's cgroup (its cpuset and CPU quota) is the binding.\n"
      "hwloc_base_binding_policy = none\n"
      "btl = self,vader,tcp\n"
      "btl_tcp_if_include = {2}\n"
      "oob_tcp_if_include = {2}\n"
      "# A host cut off mid-run: mpirun notices its daemon is gone within {3} s (TCP keepalive) and ends\n"
      "# the job; with Open MPI's default (300 s idle, then 9 probes 20 s apart) it waits for over 8 minutes.\n"
      "{4}",
      r.name, r.dir.string(), subnet(r.slot), kDaemonLossSeconds, keepalive_lines("", " = ", "\n"));
}

std::string mpirun_args_text(const ClusterRecord& r) {
  return fmt::format("--hostfile {0}/hostfile --mca plm_rsh_agent {0}/rsh-agent --mca hwloc_base_binding_policy none --mca btl self,vader,tcp "
                     "--mca btl_tcp_if_include {1} --mca oob_tcp_if_include {1} {2}\n",
                     r.dir.string(), subnet(r.slot), keepalive_lines("--mca ", " ", " "));
}

std::vector<std::string> on_host_argv(const ClusterRecord& r, int host, const std::vector<std::string>& command) {
  std::vector<std::string> argv = {"/bin/sh", "-c",     kJoinCgroups, "join-host-cgroups",
                                   cgroup_list(r, host), "ip", "netns", "exec", namespace_name(r.name, host),
                                   "unshare", "--uts", "/bin/sh", "-c", kSetHostName, host_name(r.name, host)};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

void write_cluster_files(const ClusterRecord& r) {
  write_file_atomically(r.dir / "hostfile", hostfile_text(r));
  write_file_atomically(r.dir / "rsh-agent", rsh_agent_text(r));
  write_file_atomically(r.dir / "mca-params.conf", mca_params_text(r));
  write_file_atomically(r.dir / "mpirun-args", mpirun_args_text(r));
  const fs::path agent = r.dir / "rsh-agent";
  if (chmod(agent.c_str(), 0755) != 0) throw IoError(fmt::format("cannot make {} executable", agent.string()));
}

void remove_cluster_files(const ClusterRecord& r) {
  std::error_code error;
  for (const auto& name : cluster_file_names()) fs::remove(r.dir / name, error);
  if (r.dir_created) fs::remove(r.dir, error);  // only if empty: what others put there stays
}

}  // namespace dtbench::cluster
