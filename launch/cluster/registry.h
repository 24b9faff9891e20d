#pragma once
// The record of every cluster on this machine, one JSON file per cluster in
// /run/dtbench/clusters (tmpfs: a reboot, which removes the namespaces too, removes the records).
// A record is written before anything is built and removed after everything is gone, so no
// interface or namespace exists that no record names. Changes happen under one file lock, so
// parallel `cluster up`s never pick the same name or subnet.
#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dtbench::cluster {

// A process, told apart from a later one with the same pid by its start time (/proc/PID/stat).
struct ProcessId {
  pid_t pid = 0;  // 0: none
  unsigned long long start_ticks = 0;
  static ProcessId of(pid_t pid);  // {0, 0} if no such process
  bool alive() const;              // the same process is still running
};

struct ClusterRecord {
  std::string name;
  int slot = 0;  // its /24 (naming.h)
  int hosts = 0;
  int slots_per_host = 1;
  std::string link_rate = "none";
  double cores_per_host = 0;           // each host's CPU quota in cores (host_cores.h)
  std::vector<std::string> host_cpus;  // per host: the cores it may run on, a cpu list ("0", "0-1")
  bool time_sliced = false;            // hosts x cores_per_host is more than the cores they run on
  // The yielding neighbours on the parts of cores the hosts leave (host_cores.h's fillers): the
  // cores each runs on ("1") and its share.
  std::vector<std::string> filler_cpus;
  std::vector<double> filler_cores;
  std::filesystem::path dir;  // hostfile, rsh agent, MCA parameters
  bool dir_created = false;   // `down` removes the directory only if `up` made it
  bool complete = false;      // false while `up` is still building
  bool slurm = false;         // Slurm's daemons run on the hosts (slurm_daemons.h)
  ProcessId builder;          // the `cluster up` that builds it
  ProcessId owner;            // optional: the cluster goes when this process does (--owner-pid)
  // Abandoned: its builder died before finishing, or its owner is gone.
  bool abandoned() const;
};

// Holds the registry's lock (flock) for its lifetime; creates the registry directory.
class RegistryLock {
 public:
  RegistryLock();
  ~RegistryLock();
  RegistryLock(const RegistryLock&) = delete;
  RegistryLock& operator=(const RegistryLock&) = delete;

 private:
  int fd_ = -1;
};

std::filesystem::path registry_dir();
std::vector<ClusterRecord> read_records();  // every readable record, by name
std::optional<ClusterRecord> read_record(const std::string& name);
void write_record(const ClusterRecord& record);
void remove_record(const std::string& name);
// The lowest subnet slot no record uses; IoError when all 512 are taken.
int free_slot(const std::vector<ClusterRecord>& records);

}  // namespace dtbench::cluster
