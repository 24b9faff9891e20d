#pragma once
// launch/sweep — `dtbench sweep`: the sweep plan (a sweep blueprint expanded into configurations),
// the runner that launches each repetition as a user would (parameter servers, then mpirun, each a
// child process with its log and deadline), resuming, and the results with their statistics.
// May include: core, paramserver (the token the servers it starts require), launch/blueprint,
// launch/report (run records, tables, statistics, csv), launch/cluster (the emulated cluster its
// runs may need).
// Never the commands or bench.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtbench {

struct SweepOptions {
  std::string file;
  std::vector<std::string> overrides;
  std::string output;
  std::optional<int64_t> repetitions;  // unset: the sweep's
  std::optional<int64_t> warmup;
  std::optional<double> cap_s;
  bool dry_run = false;
  bool report = true;
};

// Runs every configuration the given number of times (keeping finished runs of an earlier start),
// writes results.csv/json/md and a breakdown report over one median run per configuration.
// Throws when interrupted by SIGINT/SIGTERM, after writing what was measured.
void run_sweep(const SweepOptions& options);

}  // namespace dtbench
