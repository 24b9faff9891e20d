#pragma once
// launch/cluster: an emulated cluster on one machine (issue 12). This room owns the hosts —
// network namespaces, veth pairs into one bridge, addresses in 198.18.0.0/15, tc shaping, a
// cgroup per host with its own cores (host_cgroups.h) — the
// record of every cluster (registry.h), and the files that let plain `mpirun --hostfile` launch
// across them (cluster_files.h). It runs ip and tc through command_runner.h only.
// It may include core only; the commands (launch/cmd_cluster.cpp) include it. Nothing in the
// transports knows a cluster is emulated.
#include <filesystem>
#include <string>
#include <vector>

#include "launch/cluster/network.h"
#include "launch/cluster/registry.h"

namespace dtbench::cluster {

struct UpOptions {
  std::string name;
  int hosts = 2;
  int slots_per_host = 1;
  std::string link_rate = "none";
  double cores_per_host = 0;   // each host's CPU quota in cores; 0: this machine's cores / hosts
  std::string cpuset;          // the cores every host runs on instead of a share of its own (a cpu list)
  bool spread = false;         // hosts of less than a core one to a core where the cores allow (host_cores.h)
  std::filesystem::path dir;  // empty: /tmp/dtbench-cluster-NAME
  bool slurm = false;         // also start MUNGE, slurmctld and a slurmd per host (slurm_daemons.h)
  pid_t owner_pid = 0;        // the cluster is removed once this process is gone (0: it stays)
};

// Builds the cluster and writes its files; returns its record. A failure removes whatever was
// made before it is rethrown. InputError for a bad option or a name in use.
ClusterRecord up(const UpOptions& options);
// Removes the cluster's hosts, bridge, files and record. InputError if there is no such cluster.
void down(const std::string& name);
// Removes every cluster whose owner is gone or whose `up` died half-way; returns their names.
// up, down and status call it, so a killed test leaves its cluster only until the next of them.
std::vector<std::string> reap_abandoned();
// The record of cluster `name`; InputError naming the clusters there are otherwise.
ClusterRecord find(const std::string& name);
// The index of `host` in the cluster: its number ("1"), host name ("c1-h1") or address.
int host_index(const ClusterRecord& record, const std::string& host);
// `cluster status`: hosts, addresses, cores, links and their shaping, as text.
std::string describe(const ClusterRecord& record);
// `cluster freeze` / `thaw`: every process of the host stops (or goes on) at once, as on a hung machine.
void freeze(const std::string& name, const std::string& host, bool frozen);

}  // namespace dtbench::cluster
