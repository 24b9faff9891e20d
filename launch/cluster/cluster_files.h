#pragma once
// The files a cluster directory holds, for plain mpirun to launch across the hosts:
//   hostfile         one line per host: its address and slots=S
//   rsh-agent        mpirun's launcher (plm_rsh_agent): runs a command "on" a host, as ssh would
//   mca-params.conf  the MCA settings: `mpirun --mca mca_param_files D/mca-params.conf`
//   mpirun-args      the same settings and the hostfile as arguments: `mpirun $(cat D/mpirun-args)`
#include <filesystem>
#include <string>
#include <vector>

#include "launch/cluster/registry.h"

namespace dtbench::cluster {

std::vector<std::string> cluster_file_names();
void write_cluster_files(const ClusterRecord& record);
// Removes the files above, and the directory if `up` made it and nothing else is in it.
void remove_cluster_files(const ClusterRecord& record);

// Whether hosts share a core: each holds a fraction of one, or together more than the machine has.
// Then the rsh agent makes the MPI ranks yield their core while they wait.
bool hosts_share_cores(const ClusterRecord& record);

// The text of each file (tested without root).
std::string hostfile_text(const ClusterRecord& record);
std::string rsh_agent_text(const ClusterRecord& record);
std::string mca_params_text(const ClusterRecord& record);
std::string mpirun_args_text(const ClusterRecord& record);

// The argv that runs `command` on `host`: inside its namespace (ip netns exec) and its cgroups (its
// cores), in a UTS namespace of its own carrying the host's name, so that gethostname() tells the
// hosts apart.
std::vector<std::string> on_host_argv(const ClusterRecord& record, int host, const std::vector<std::string>& command);

}  // namespace dtbench::cluster
