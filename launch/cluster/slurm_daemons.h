#pragma once
// The Slurm daemons of an emulated cluster (`cluster up --slurm`): munged, slurmctld on host 0 and
// a slurmd on every host, each started on its host the way `cluster exec` starts a command (the
// host's namespace, cgroups and name), so a frozen host's slurmd stops with it and Slurm sees the
// node go silent. Their files are slurm_config.h's.
#include <string>

#include "launch/cluster/registry.h"

namespace dtbench::cluster {

// InputError naming the missing programs and the install command unless munged, slurmctld,
// slurmd and the client commands are installed.
void require_slurm_installed();

// Writes the files and starts the daemons; returns once every node is idle (IoError naming the
// daemon and its log otherwise, within 60 s). On an error, what was started stays for stop_slurm.
void start_slurm(const ClusterRecord& record);
// Ends the daemons (by their pid files, SIGTERM then SIGKILL) and removes the slurm/ folder; what
// is already gone is skipped.
void stop_slurm(const ClusterRecord& record);

// `cluster status`: the partition's nodes and their state (sinfo), or why they cannot be listed.
std::string describe_slurm(const ClusterRecord& record);

// The line a user runs to reach this cluster's Slurm: "export SLURM_CONF=D/slurm/slurm.conf".
std::string slurm_env_line(const ClusterRecord& record);

}  // namespace dtbench::cluster
