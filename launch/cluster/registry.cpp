#include "launch/cluster/registry.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/cluster/naming.h"

namespace dtbench::cluster {

namespace fs = std::filesystem;

ProcessId ProcessId::of(pid_t pid) {
  const auto stat = read_file(fmt::format("/proc/{}/stat", pid));
  if (pid <= 0 || !stat) return {};
  // Field 22, counted after the command, which is in parentheses and may hold spaces.
  const size_t close = stat->rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(stat->substr(close + 2));
  std::string field;
  for (int i = 3; i < 22 && rest >> field; ++i) {
  }
  unsigned long long start = 0;
  if (!(rest >> start)) return {};
  return {pid, start};
}

bool ProcessId::alive() const {
  if (pid <= 0) return false;
  const ProcessId now = of(pid);
  return now.pid == pid && now.start_ticks == start_ticks;
}

bool ClusterRecord::abandoned() const {
  if (!complete && !builder.alive()) return true;
  return owner.pid > 0 && !owner.alive();
}

fs::path registry_dir() { return "/run/dtbench/clusters"; }

RegistryLock::RegistryLock() {
  std::error_code error;
  fs::create_directories(registry_dir(), error);
  const fs::path lock = registry_dir() / ".lock";
  fd_ = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd_ < 0) throw IoError(fmt::format("cannot open the cluster registry lock {}: {}", lock.string(), std::strerror(errno)));
  // Held only while records change (milliseconds) or a cluster is built or removed (seconds).
  for (int tries = 0; flock(fd_, LOCK_EX | LOCK_NB) != 0; ++tries) {
    if (tries >= 1200) {
      close(fd_);
      throw IoError(fmt::format("the cluster registry lock {} has been held for 60 s", lock.string()));
    }
    usleep(50000);
  }
}

RegistryLock::~RegistryLock() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

namespace {

nlohmann::json to_json(const ProcessId& p) { return {{"pid", p.pid}, {"start_ticks", p.start_ticks}}; }
ProcessId process_from(const nlohmann::json& j) {
  return {j.at("pid").get<pid_t>(), j.at("start_ticks").get<unsigned long long>()};
}

ClusterRecord record_from(const nlohmann::json& j) {
  ClusterRecord r;
  r.name = j.at("name").get<std::string>();
  r.slot = j.at("slot").get<int>();
  r.hosts = j.at("hosts").get<int>();
  r.slots_per_host = j.at("slots_per_host").get<int>();
  r.link_rate = j.at("link_rate").get<std::string>();
  r.cores_per_host = j.value("cores_per_host", 0.0);
  r.host_cpus = j.value("host_cpus", std::vector<std::string>{});
  r.time_sliced = j.value("time_sliced", false);
  r.filler_cpus = j.value("filler_cpus", std::vector<std::string>{});
  r.filler_cores = j.value("filler_cores", std::vector<double>{});
  r.dir = j.at("dir").get<std::string>();
  r.dir_created = j.at("dir_created").get<bool>();
  r.complete = j.at("complete").get<bool>();
  r.slurm = j.value("slurm", false);
  r.builder = process_from(j.at("builder"));
  r.owner = process_from(j.at("owner"));
  return r;
}

fs::path record_path(const std::string& name) { return registry_dir() / (name + ".json"); }

}  // namespace

std::optional<ClusterRecord> read_record(const std::string& name) {
  const auto text = read_file(record_path(name));
  if (!text) return std::nullopt;
  try {
    return record_from(nlohmann::json::parse(*text));
  } catch (const std::exception& error) {
    spdlog::warn("cluster record {} is unreadable ({}): ignored", record_path(name).string(), error.what());
    return std::nullopt;
  }
}

std::vector<ClusterRecord> read_records() {
  std::vector<ClusterRecord> records;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(registry_dir(), error)) {
    if (entry.path().extension() != ".json") continue;
    if (auto record = read_record(entry.path().stem().string())) records.push_back(std::move(*record));
  }
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return records;
}

void write_record(const ClusterRecord& r) {
  const nlohmann::json j = {{"name", r.name},         {"slot", r.slot},
                            {"hosts", r.hosts},       {"slots_per_host", r.slots_per_host},
                            {"link_rate", r.link_rate}, {"cores_per_host", r.cores_per_host},
                            {"host_cpus", r.host_cpus}, {"time_sliced", r.time_sliced},
                            {"filler_cpus", r.filler_cpus}, {"filler_cores", r.filler_cores},
                            {"dir", r.dir.string()},
                            {"dir_created", r.dir_created}, {"complete", r.complete}, {"slurm", r.slurm},
                            {"builder", to_json(r.builder)}, {"owner", to_json(r.owner)}};
  write_file_atomically(record_path(r.name), j.dump(2) + "\n");
}

void remove_record(const std::string& name) {
  std::error_code error;
  fs::remove(record_path(name), error);
}

int free_slot(const std::vector<ClusterRecord>& records) {
  std::set<int> used;
  for (const auto& r : records) used.insert(r.slot);
  for (int slot = 0; slot < kSlotCount; ++slot) {
    if (!used.count(slot)) return slot;
  }
  throw IoError(fmt::format("all {} cluster subnets in 198.18.0.0/15 are in use (see dtbench cluster status)", kSlotCount));
}

}  // namespace dtbench::cluster
