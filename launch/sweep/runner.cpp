#include "launch/sweep/runner.h"

#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/util/clock.h"
#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/cluster/cluster_files.h"
#include "launch/cluster/naming.h"
#include "launch/sweep/child_process.h"
#include "paramserver/security.h"

namespace dtbench {

namespace fs = std::filesystem;
using Clock = ChildProcess::Clock;

namespace {

// After the workers are done, servers have this long to see every worker's shutdown and exit;
// a stopped process this long to exit on SIGTERM (and write its report) before SIGKILL.
constexpr double kServerExitSeconds = 15.0;
constexpr double kTerminateGraceSeconds = 10.0;
// mpirun's spacing between the signals it sends its ranks when stopped (SIGCONT, SIGTERM, SIGKILL):
// its SIGKILL, at twice this, must fall within the grace above.
constexpr int kMpirunSignalSpacingSeconds = 4;
static_assert(2 * kMpirunSignalSpacingSeconds < kTerminateGraceSeconds);
// A server that has not printed its address by then is not starting: a failure, not a capped run.
constexpr double kServerStartSeconds = 60.0;

// A log, or a report, as far as it has been written ("" before it exists).
std::string read_text(const fs::path& path) { return read_file(path).value_or(""); }

// The last line of a log that says what went wrong, for run.json and the results table.
std::string last_error_line(const fs::path& log) {
  std::stringstream lines(read_text(log));
  std::string found, last;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    last = line;
    if (line.find("error") != std::string::npos) found = line;
  }
  return !found.empty() ? found : last;
}

std::string command_line(const std::vector<std::string>& argv) { return fmt::format("{}", fmt::join(argv, " ")); }

std::vector<std::string> blueprint_arguments(const SweepConfiguration& c) {
  std::vector<std::string> args;
  if (!c.base.empty()) args.insert(args.end(), {"--config", c.base.string()});
  for (const auto& assignment : c.overrides) args.insert(args.end(), {"--set", assignment});
  return args;
}

// The run's parameter-server token, made by the runner so that its servers and workers share it.
fs::path token_file(const fs::path& dir) { return dir / "ps.token"; }

// Where a run's processes go: this machine, the hosts of launch.hostfile, or an emulated cluster.
struct Placement {
  const cluster::ClusterRecord* cluster = nullptr;
  // The address shard `shard` listens on.
  std::string server_host(const SweepBlueprint& sweep, int64_t shard) const {
    return cluster ? cluster::host_address(cluster->slot, static_cast<int>(shard % cluster->hosts)) : sweep.launch.ps_host;
  }
  // The command, run on shard `shard`'s host.
  std::vector<std::string> on_server_host(std::vector<std::string> argv, int64_t shard) const {
    return cluster ? cluster::on_host_argv(*cluster, static_cast<int>(shard % cluster->hosts), argv) : argv;
  }
};

std::vector<std::string> worker_command(const SweepBlueprint& sweep, const SweepConfiguration& c,
                                        const fs::path& dir, const std::string& servers, const Placement& placement) {
  std::vector<std::string> argv;
  if (c.needs_mpirun()) {
    argv = {sweep.launch.mpirun};
    if (geteuid() == 0) argv.push_back("--allow-run-as-root");  // Open MPI refuses root otherwise
    argv.insert(argv.end(), {"-np", std::to_string(c.workers)});
    if (placement.cluster != nullptr) {
      const fs::path& cluster_dir = placement.cluster->dir;
      argv.insert(argv.end(), {"--mca", "mca_param_files", (cluster_dir / "mca-params.conf").string(), "--hostfile",
                               (cluster_dir / "hostfile").string()});
    } else if (!sweep.launch.hostfile.empty()) {
      argv.insert(argv.end(), {"--hostfile", sweep.launch.hostfile});
    } else {
      argv.push_back("--oversubscribe");  // localhost: more workers than cores is the point of some sweeps
    }
    // mpirun, stopped, sends the ranks SIGCONT, SIGTERM after this many seconds and SIGKILL after as
    // many again. Open MPI's default, 1, kills a rank still finishing its step before it writes its
    // report; the local ranks have had SIGTERM from the runner at once, and remote ones get it here.
    argv.insert(argv.end(), {"--mca", "odls_base_sigkill_timeout", std::to_string(kMpirunSignalSpacingSeconds)});
    argv.insert(argv.end(), sweep.launch.mpirun_args.begin(), sweep.launch.mpirun_args.end());
    for (const auto& [name, value] : c.mca) argv.insert(argv.end(), {"--mca", name, value});
  }
  argv.insert(argv.end(), {dtbench_executable().string(), "train"});
  const auto blueprint = blueprint_arguments(c);
  argv.insert(argv.end(), blueprint.begin(), blueprint.end());
  if (!servers.empty()) {
    argv.insert(argv.end(), {"--set", "ps.servers=" + servers, "--set", "ps.auth_token_file=" + token_file(dir).string()});
  }
  if (c.needs_servers() && !c.needs_mpirun()) argv.insert(argv.end(), {"--rank", "0", "--world", "1"});
  argv.insert(argv.end(), {"--run-dir", dir.string()});
  return argv;
}

std::vector<std::string> server_command(const SweepBlueprint& sweep, const SweepConfiguration& c, const fs::path& dir,
                                        int64_t shard, const Placement& placement) {
  std::vector<std::string> argv = {dtbench_executable().string(), "ps"};
  const auto blueprint = blueprint_arguments(c);
  argv.insert(argv.end(), blueprint.begin(), blueprint.end());
  // The server takes its mode from --mode, so the blueprint needs no server list of its own; a
  // checkpoint per run (ResNet-50's is 90 MB) would fill the disk over a sweep and serve nothing.
  const std::string mode = c.transport_row()->synchronous ? "sync" : "async";
  argv.insert(argv.end(), {"--set", fmt::format("transport={}", kLocalTransport), "--mode", mode,
                           "--listen", placement.server_host(sweep, shard) + ":0", "--shard", std::to_string(shard), "--shards",
                           std::to_string(c.servers), "--workers", std::to_string(c.workers), "--output",
                           (dir / "servers").string(), "--no-checkpoint", "--auth-token-file",
                           token_file(dir).string()});
  return placement.on_server_host(std::move(argv), shard);
}

// The address a server printed ("dtbench ps: shard S listening on HOST:PORT"), once it has.
std::optional<std::string> listening_address(const fs::path& log) {
  const std::string text = read_text(log);
  const std::string marker = " listening on ";
  const size_t at = text.find(marker);
  if (at == std::string::npos) return std::nullopt;
  const size_t end = text.find('\n', at);
  if (end == std::string::npos) return std::nullopt;  // the line is not complete yet
  return text.substr(at + marker.size(), end - at - marker.size());
}

// What the run ends as, given how its worker process ended.
void classify(SweepRun& run, std::optional<int> status, bool capped, bool interrupted, const fs::path& worker_log) {
  if (capped) {
    run.status = "capped";
  } else if (interrupted) {
    run.status = "interrupted";
  } else {
    run.status = status && *status == 0 ? "complete" : "failed";
  }
  run.exit_code = status.value_or(-1);
  if (run.status == "complete") return;
  const fs::path report = run.dir / "report.json";
  if (fs::exists(report)) {
    try {
      const auto json = nlohmann::json::parse(read_text(report));
      if (json.contains("error")) run.error = json["error"].get<std::string>();
    } catch (const std::exception&) {
    }
  }
  if (run.error.empty()) run.error = last_error_line(worker_log);
}

}  // namespace

fs::path dtbench_executable() {
  // Read once, at the sweep's start (before /proc/self/exe could say "(deleted)"). A binary rebuilt
  // during a sweep is the one later runs use: each report.json records the commit it was built from.
  static const fs::path self = [] {
    std::error_code error;
    fs::path path = fs::read_symlink("/proc/self/exe", error);
    if (error) throw IoError("cannot find the dtbench executable through /proc/self/exe: " + error.message());
    return path;
  }();
  return self;
}

nlohmann::json sweep_run_json(const SweepRun& run) {
  return {{"configuration", run.configuration}, {"repetition", run.repetition}, {"warmup", run.warmup},
          {"status", run.status},               {"exit_code", run.exit_code},   {"process_s", run.process_seconds},
          {"error", run.error},                 {"commands", run.commands}};
}

SweepRun sweep_run_from_json(const nlohmann::json& json, const fs::path& dir) {
  SweepRun run;
  run.dir = dir;
  run.configuration = json.at("configuration").get<std::string>();
  run.repetition = json.at("repetition").get<int64_t>();
  run.warmup = json.at("warmup").get<bool>();
  run.status = json.at("status").get<std::string>();
  run.exit_code = json.at("exit_code").get<int>();
  run.process_seconds = json.at("process_s").get<double>();
  run.error = json.value("error", "");
  run.commands = json.value("commands", std::vector<std::string>{});
  return run;
}

namespace {

// A repetition's time: its cap, a stop request, and whether either ended it.
struct RepetitionClock {
  Clock::time_point start, deadline;
  const std::function<bool()>& interrupted;
  bool capped = false, stopped = false;
};

// The address a starting server prints, or nullopt when the cap or a stop request came first;
// IoError when the server exits or stays silent past kServerStartSeconds.
std::optional<std::string> wait_for_address(ChildProcess& server, const fs::path& log, int64_t shard,
                                            RepetitionClock& clock) {
  const auto started_by = clock.start + to_duration(kServerStartSeconds);
  while (true) {
    if (auto address = listening_address(log)) return address;
    if (server.poll()) throw IoError(fmt::format("parameter server {} exited: {}", shard, last_error_line(log)));
    if (Clock::now() >= started_by && started_by < clock.deadline) {
      throw IoError(fmt::format("parameter server {} printed no address within {:g} s; see {}", shard,
                                kServerStartSeconds, log.string()));
    }
    if (Clock::now() >= clock.deadline) {
      clock.capped = true;
      return std::nullopt;
    }
    if (clock.interrupted && clock.interrupted()) {
      clock.stopped = true;
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Starts the configuration's shards (with a fresh token file) and returns their addresses; fewer
// than the shards when the cap or a stop request came first.
std::vector<std::string> start_servers(const SweepBlueprint& sweep, const SweepConfiguration& c, const fs::path& dir,
                                       SweepRun& run, std::vector<std::unique_ptr<ChildProcess>>& servers,
                                       RepetitionClock& clock, const Placement& placement) {
  create_token_file(token_file(dir).string());
  for (int64_t shard = 0; shard < c.servers; ++shard) {
    const auto argv = server_command(sweep, c, dir, shard, placement);
    run.commands.push_back(command_line(argv));
    servers.push_back(std::make_unique<ChildProcess>(argv, dir / fmt::format("server-{}.log", shard)));
  }
  std::vector<std::string> addresses;
  for (int64_t shard = 0; shard < c.servers; ++shard) {
    const auto address =
        wait_for_address(*servers[static_cast<size_t>(shard)], dir / fmt::format("server-{}.log", shard), shard, clock);
    if (!address) break;
    addresses.push_back(*address);
  }
  return addresses;
}

// Servers end by themselves once every worker said goodbye; a failed run leaves them waiting, so
// they are stopped. After a clean run, a server that did not stop or failed is named.
std::string stop_servers(std::vector<std::unique_ptr<ChildProcess>>& servers, const fs::path& dir, bool clean) {
  std::string server_failure;
  for (size_t shard = 0; shard < servers.size(); ++shard) {
    if (!clean) {
      servers[shard]->terminate(kTerminateGraceSeconds);
      continue;
    }
    const fs::path log = dir / fmt::format("server-{}.log", shard);
    const std::optional<int> ended = servers[shard]->wait_until(Clock::now() + to_duration(kServerExitSeconds));
    if (!ended) {
      servers[shard]->terminate(kTerminateGraceSeconds);
      if (server_failure.empty()) {
        server_failure = fmt::format("parameter server {} did not stop after the workers; see {}", shard, log.string());
      }
    } else if (const int code = *ended; code != 0 && server_failure.empty()) {
      server_failure = fmt::format("parameter server {} exited with {}: {}", shard, code, last_error_line(log));
    }
  }
  return server_failure;
}

// mpirun (or one dtbench train) until it ends, the cap, or a stop request.
std::optional<int> run_worker_processes(const SweepBlueprint& sweep, const SweepConfiguration& c,
                                        const fs::path& dir, const std::vector<std::string>& addresses, SweepRun& run,
                                        RepetitionClock& clock, const Placement& placement) {
  const auto argv = worker_command(sweep, c, dir, fmt::format("{}", fmt::join(addresses, ",")), placement);
  run.commands.push_back(command_line(argv));
  ChildProcess workers(argv, dir / "workers.log");
  std::optional<int> status = workers.wait_until(clock.deadline, clock.interrupted);
  if (!status) {
    clock.capped = Clock::now() >= clock.deadline;
    clock.stopped = !clock.capped;
    status = workers.terminate(kTerminateGraceSeconds);
  }
  return status;
}

}  // namespace

SweepRun run_repetition(const SweepBlueprint& sweep, const SweepConfiguration& c, const fs::path& dir,
                        int64_t repetition, bool warmup, const std::function<bool()>& interrupted,
                        const cluster::ClusterRecord* cluster) {
  const Placement placement{.cluster = cluster};
  SweepRun run;
  run.configuration = c.id;
  run.repetition = repetition;
  run.warmup = warmup;
  run.dir = dir;
  std::error_code error;
  if (!fs::create_directories(dir, error)) {
    throw IoError(fmt::format("cannot create run directory {} (it must not exist yet): {}", dir.string(),
                              error ? error.message() : "it exists"));
  }
  const auto start = Clock::now();
  RepetitionClock clock{.start = start, .deadline = start + to_duration(sweep.cap_s), .interrupted = interrupted};
  std::vector<std::unique_ptr<ChildProcess>> servers;
  try {
    std::vector<std::string> addresses;
    if (c.needs_servers()) addresses = start_servers(sweep, c, dir, run, servers, clock, placement);
    std::optional<int> worker_status;
    if (!clock.capped && !clock.stopped) {
      worker_status = run_worker_processes(sweep, c, dir, addresses, run, clock, placement);
    }
    const bool clean = worker_status && *worker_status == 0 && !clock.capped && !clock.stopped;
    const std::string server_failure = stop_servers(servers, dir, clean);
    classify(run, worker_status, clock.capped, clock.stopped, dir / "workers.log");
    if (run.status == "complete" && !server_failure.empty()) {
      run.status = "failed";
      run.error = server_failure;
    }
  } catch (const IoError& failure) {
    for (auto& server : servers) server->terminate(kTerminateGraceSeconds);
    run.status = "failed";
    run.exit_code = -1;
    run.error = failure.what();
  }
  run.process_seconds = seconds_since(start);
  write_file_atomically(dir / "run.json", sweep_run_json(run).dump(2) + "\n");
  return run;
}

}  // namespace dtbench
