#include "launch/cluster/slurm_daemons.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/cluster/cluster_files.h"
#include "launch/cluster/command_runner.h"
#include "launch/cluster/slurm_config.h"

namespace dtbench::cluster {

namespace fs = std::filesystem;

namespace {

constexpr double kNodesIdleSeconds = 60;  // from the last slurmd's start until every node is idle

// A daemon: the program, the host it runs on, and its pid file.
struct Daemon {
  std::string program;
  int host = 0;
  fs::path pid_file;
  std::vector<std::string> argv;
};

std::vector<Daemon> daemons(const ClusterRecord& r) {
  const fs::path dir = slurm_dir(r);
  const std::string conf = slurm_conf_path(r).string();
  std::vector<Daemon> list;
  list.push_back({"munged", 0, dir / "munge" / "munged.pid",
                  {"munged", "--socket=" + munge_socket_path(r).string(), "--key-file=" + munge_key_path(r).string(),
                   "--pid-file=" + (dir / "munge" / "munged.pid").string(),
                   "--seed-file=" + (dir / "munge" / "munged.seed").string(),
                   "--log-file=" + (dir / "munge" / "munged.log").string(), "--force"}});
  list.push_back({"slurmctld", 0, dir / "slurmctld.pid", {"slurmctld", "-f", conf}});
  for (int host = 0; host < r.hosts; ++host) {
    list.push_back({"slurmd", host, dir / ("slurmd-" + node_name(r, host) + ".pid"),
                    {"slurmd", "-f", conf, "-N", node_name(r, host)}});
  }
  return list;
}

// The pid in the daemon's pid file, if that process is still this daemon (a pid is reused).
pid_t running_pid(const Daemon& d) {
  const auto text = read_file(d.pid_file);
  if (!text) return 0;
  const pid_t pid = static_cast<pid_t>(std::atol(text->c_str()));
  if (pid <= 0) return 0;
  const auto comm = read_file(fmt::format("/proc/{}/comm", pid));
  return comm && comm->rfind(d.program, 0) == 0 ? pid : 0;
}

// A Slurm client command against this cluster's controller.
std::vector<std::string> client(const ClusterRecord& r, std::vector<std::string> command) {
  command.insert(command.begin(), {"env", "SLURM_CONF=" + slurm_conf_path(r).string()});
  return command;
}

std::string log_tail(const fs::path& log) {
  const auto text = read_file(log);
  if (!text) return "(no log " + log.string() + ")";
  const size_t from = text->size() > 1500 ? text->rfind('\n', text->size() - 1500) : 0;
  return log.string() + ":\n" + text->substr(from == std::string::npos ? 0 : from);
}

void wait_for_idle_nodes(const ClusterRecord& r) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kNodesIdleSeconds);
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    const CommandResult states = run_command(client(r, {"sinfo", "--noheader", "--Node", "--format=%N %T"}), 10);
    last = states.output;
    std::istringstream lines(states.output);
    int idle = 0;
    for (std::string node, state; lines >> node >> state;) idle += state == "idle";
    if (states.exit_code == 0 && idle == r.hosts) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  throw IoError(fmt::format("cluster {}: Slurm's nodes were not all idle after {:.0f} s (sinfo: {})\n{}", r.name,
                            kNodesIdleSeconds, last, log_tail(slurm_dir(r) / "slurmctld.log")));
}

}  // namespace

void require_slurm_installed() {
  std::string missing;
  for (const char* program : {"munged", "slurmctld", "slurmd", "sinfo", "sbatch", "srun"}) {
    if (run_command({"sh", "-c", std::string("command -v ") + program}).exit_code != 0) {
      missing += (missing.empty() ? "" : ", ") + std::string(program);
    }
  }
  if (!missing.empty()) {
    fail_input("--slurm: {} not installed (Debian: `scripts/install-deps.sh slurm` installs munge, slurmctld, "
               "slurmd and slurm-client)", missing);
  }
}

void start_slurm(const ClusterRecord& r) {
  write_slurm_files(r);
  for (const Daemon& d : daemons(r)) {
    // Each daemon forks into the background once it is ready, and its first process exits.
    const CommandResult started = run_command(on_host_argv(r, d.host, d.argv), 30);
    if (started.exit_code != 0) {
      const fs::path log = d.program == "munged"    ? slurm_dir(r) / "munge" / "munged.log"
                           : d.program == "slurmctld" ? slurm_dir(r) / "slurmctld.log"
                                                      : slurm_dir(r) / ("slurmd-" + node_name(r, d.host) + ".log");
      throw IoError(fmt::format("cluster {}: {} on {} exited {}: {}\n{}", r.name, command_line(d.argv),
                                node_name(r, d.host), started.exit_code, started.output, log_tail(log)));
    }
  }
  wait_for_idle_nodes(r);
}

void stop_slurm(const ClusterRecord& r) {
  std::vector<pid_t> pids;
  for (const Daemon& d : daemons(r)) {
    if (const pid_t pid = running_pid(d)) pids.push_back(pid);
  }
  for (const pid_t pid : pids) kill(pid, SIGTERM);
  for (int tries = 0; tries < 50; ++tries) {
    bool any = false;
    for (const pid_t pid : pids) any = any || kill(pid, 0) == 0;
    if (!any) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (const pid_t pid : pids) kill(pid, SIGKILL);
  std::error_code error;
  fs::remove_all(slurm_runtime_dir(r), error);
  fs::remove_all(slurm_dir(r), error);
  if (error) spdlog::warn("cluster {}: cannot remove {}: {}", r.name, slurm_dir(r).string(), error.message());
}

std::string describe_slurm(const ClusterRecord& r) {
  const CommandResult sinfo =
      run_command(client(r, {"sinfo", "--Node", "--format=%10N %10P %6c %12T %E"}), 10);
  std::string text = fmt::format("  slurm: {}\n", slurm_env_line(r));
  std::istringstream lines(sinfo.output);
  for (std::string line; std::getline(lines, line);) text += "    " + line + "\n";
  if (sinfo.exit_code != 0) text += fmt::format("    (sinfo exited {})\n", sinfo.exit_code);
  return text;
}

std::string slurm_env_line(const ClusterRecord& r) { return "export SLURM_CONF=" + slurm_conf_path(r).string(); }

}  // namespace dtbench::cluster
