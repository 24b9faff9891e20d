#pragma once
// One run of a sweep configuration, launched the way a user would: parameter servers first (for
// ps transports, each a `dtbench ps` on a free port), then the workers (`mpirun -np N dtbench
// train`, or one `dtbench train`), all stopped at the wall-clock cap. The run directory gets the
// workers' files, servers/ with the servers' reports, one log per process and run.json: what the
// runner saw (status, exit code, seconds, the command lines).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/cluster/registry.h"
#include "launch/sweep/plan.h"

namespace dtbench {

struct SweepRun {
  std::string configuration;
  int64_t repetition = 0;  // from 1, within warm-ups or within measured runs
  bool warmup = false;
  std::filesystem::path dir;
  std::string status;  // complete | failed | capped | interrupted
  int exit_code = 0;
  double process_seconds = 0.0;  // start of the first process to the end of the last
  std::string error;
  std::vector<std::string> commands;

  // A finished run is kept when the sweep is started again; failed or interrupted ones are redone.
  bool final() const { return status == "complete" || status == "capped"; }
};

nlohmann::json sweep_run_json(const SweepRun& run);
SweepRun sweep_run_from_json(const nlohmann::json& json, const std::filesystem::path& dir);

// Runs one repetition into `dir`, which must not exist yet. `interrupted()` is asked while waiting:
// true stops the run's processes and records it as interrupted. `cluster`, for a configuration
// that needs one: mpirun launches the workers across its hosts, and shard k listens on host
// k mod hosts.
SweepRun run_repetition(const SweepBlueprint& sweep, const SweepConfiguration& configuration,
                        const std::filesystem::path& dir, int64_t repetition, bool warmup,
                        const std::function<bool()>& interrupted, const cluster::ClusterRecord* cluster);

// The dtbench binary that is running (so runs use the same build as the sweep).
std::filesystem::path dtbench_executable();

}  // namespace dtbench
