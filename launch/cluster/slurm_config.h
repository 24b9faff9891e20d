#pragma once
// The Slurm of an emulated cluster (`cluster up --slurm`): what its files say and where they live.
// Everything is under the cluster directory's slurm/ folder, which `down` removes whole:
//   slurm.conf, cgroup.conf   the controller on host 0, one node per host at the host's address
//   munge/                    the cluster's own MUNGE key, socket, pid and log
//   state/                    slurmctld's saved state
//   tmp-<node>/               each node's TmpFS (PMIx puts its per-step folders there: in /tmp the
//                             nodes, one file system, would collide)
// and, for the sockets (a socket's path is at most 108 bytes, which a cluster directory can pass),
// under /run/dtbench/slurm-NAME: munge.socket and each slurmd's spool-<node>/.
//   jobcomp.txt               a line per finished job, which `sacct -c` reads
// Pure text (tested without root); slurm_daemons.h starts and stops the daemons.
#include <filesystem>
#include <string>

#include "launch/cluster/registry.h"

namespace dtbench::cluster {

std::filesystem::path slurm_dir(const ClusterRecord& record);
std::filesystem::path slurm_conf_path(const ClusterRecord& record);
std::filesystem::path slurm_runtime_dir(const ClusterRecord& record);
std::filesystem::path munge_socket_path(const ClusterRecord& record);
std::filesystem::path munge_key_path(const ClusterRecord& record);

// The CPUs Slurm is told a host's node has: its quota rounded up, at least one.
int node_cpus(const ClusterRecord& record);
// The node name of host `host`: its host name (NAME-hI), which slurmd -N is given.
std::string node_name(const ClusterRecord& record, int host);

std::string slurm_conf_text(const ClusterRecord& record);
std::string cgroup_conf_text();

// Makes slurm/ and its folders, a fresh MUNGE key (0400, in a 0700 folder) and the two files.
void write_slurm_files(const ClusterRecord& record);

}  // namespace dtbench::cluster
