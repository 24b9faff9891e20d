#include "launch/cluster/slurm_config.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/cluster/naming.h"

namespace dtbench::cluster {

namespace fs = std::filesystem;

fs::path slurm_dir(const ClusterRecord& r) { return r.dir / "slurm"; }
fs::path slurm_conf_path(const ClusterRecord& r) { return slurm_dir(r) / "slurm.conf"; }
fs::path slurm_runtime_dir(const ClusterRecord& r) { return registry_dir().parent_path() / ("slurm-" + r.name); }
fs::path munge_socket_path(const ClusterRecord& r) { return slurm_runtime_dir(r) / "munge.socket"; }
fs::path munge_key_path(const ClusterRecord& r) { return slurm_dir(r) / "munge" / "munge.key"; }

int node_cpus(const ClusterRecord& r) { return std::max(1, static_cast<int>(std::ceil(r.cores_per_host - 1e-9))); }

std::string node_name(const ClusterRecord& r, int host) { return host_name(r.name, host); }

std::string slurm_conf_text(const ClusterRecord& r) {
  const std::string dir = slurm_dir(r).string();
  std::string nodes;
  for (int host = 0; host < r.hosts; ++host) {
    nodes += fmt::format("NodeName={} NodeAddr={} CPUs={} State=UNKNOWN\n", node_name(r, host), host_address(r.slot, host),
                         node_cpus(r));
  }
  return fmt::format(
      "# Slurm of dtbench cluster {0}: `export SLURM_CONF={1}/slurm.conf`, then sinfo, sbatch, srun, squeue.\n"
      "# slurmctld runs on host 0, a slurmd on every host, each inside its host (namespace and cgroups).\n"
      "ClusterName=dtbench-{0}\n"
      "SlurmctldHost={2}({3})\n"
      "SlurmUser=root\n"
      "SlurmdUser=root\n"
      "AuthType=auth/munge\n"
      "CredType=cred/munge\n"
      "AuthInfo=socket={5}/munge.socket\n"
      "StateSaveLocation={1}/state\n"
      "SlurmdSpoolDir={5}/spool-%n\n"
      "TmpFS={1}/tmp-%n\n"
      "SlurmctldPidFile={1}/slurmctld.pid\n"
      "SlurmdPidFile={1}/slurmd-%n.pid\n"
      "SlurmctldLogFile={1}/slurmctld.log\n"
      "SlurmdLogFile={1}/slurmd-%n.log\n"
      "# dtbench's cgroups already hold every process of a host (its cores, its freezer): Slurm tracks\n"
      "# processes by their parents and binds nothing, so it never moves one out of its host.\n"
      "ProctrackType=proctrack/linuxproc\n"
      "TaskPlugin=task/none\n"
      "JobAcctGatherType=jobacct_gather/none\n"
      "# No slurmdbd: sacct has no accounting; `sacct -c` reads the finished jobs from jobcomp.txt.\n"
      "AccountingStorageType=accounting_storage/none\n"
      "JobCompType=jobcomp/filetxt\n"
      "JobCompLoc={1}/jobcomp.txt\n"
      "SchedulerType=sched/backfill\n"
      "SelectType=select/cons_tres\n"
      "SelectTypeParameters=CR_Core\n"
      "MpiDefault=none\n"
      "ReturnToService=2\n"
      "# A host that stops answering (cluster freeze) is DOWN within about 10 s; a cancelled step's\n"
      "# processes get SIGKILL 5 s after SIGTERM.\n"
      "SlurmdTimeout=10\n"
      "KillWait=5\n"
      "MailProg=/bin/true\n"
      "{4}"
      "PartitionName={0} Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
      r.name, dir, node_name(r, 0), host_address(r.slot, 0), nodes, slurm_runtime_dir(r).string());
}

std::string cgroup_conf_text() {
  return "# slurmd loads its cgroup plugin however it is configured; `ip netns exec` hides /sys/fs/cgroup, and\n"
         "# no plugin here (proctrack/linuxproc, task/none) makes a cgroup, so it is named, not detected.\n"
         "CgroupPlugin=cgroup/v1\n"
         "CgroupAutomount=no\n";
}

namespace {
void make_private_dir(const fs::path& dir, mode_t mode) {
  fs::create_directories(dir);
  if (chmod(dir.c_str(), mode) != 0) throw IoError(fmt::format("cannot set the mode of {}", dir.string()));
}
}  // namespace

void write_slurm_files(const ClusterRecord& r) {
  const fs::path dir = slurm_dir(r);
  make_private_dir(dir, 0755);
  make_private_dir(dir / "munge", 0755);  // the key inside stays 0400
  make_private_dir(slurm_runtime_dir(r), 0755);
  make_private_dir(dir / "state", 0700);
  for (int host = 0; host < r.hosts; ++host) {
    make_private_dir(slurm_runtime_dir(r) / ("spool-" + node_name(r, host)), 0755);
    make_private_dir(dir / ("tmp-" + node_name(r, host)), 01777);
  }
  // The cluster's own key: its daemons trust each other and no other cluster's.
  std::ifstream random("/dev/urandom", std::ios::binary);
  std::string key(1024, '\0');
  if (!random.read(key.data(), static_cast<std::streamsize>(key.size()))) throw IoError("cannot read /dev/urandom");
  const fs::path key_path = munge_key_path(r);
  write_file_atomically(key_path, key);
  if (chmod(key_path.c_str(), 0400) != 0) throw IoError(fmt::format("cannot set the mode of {}", key_path.string()));
  write_file_atomically(slurm_conf_path(r), slurm_conf_text(r));
  write_file_atomically(dir / "cgroup.conf", cgroup_conf_text());
}

}  // namespace dtbench::cluster
