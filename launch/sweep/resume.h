#pragma once
// Resuming a sweep where it stopped: <output>/<name>/<configuration>/rep-<k> that finished
// (complete, or stopped at the cap) are kept and skipped; a failed or interrupted one is moved
// aside to <dir>.attempt-<n> (kept, never overwritten) and run again.
#include <filesystem>
#include <optional>

#include "launch/sweep/plan.h"
#include "launch/sweep/runner.h"

namespace dtbench {

// Records the configuration's settings in dir/configuration.json, or checks them against the
// recorded ones: InputError when they differ or the file is unreadable.
void check_or_record_settings(const std::filesystem::path& dir, const SweepConfiguration& c);

// The finished run kept in `dir` from an earlier start; nullopt (and an unfinished one moved
// aside) otherwise.
std::optional<SweepRun> kept_run(const std::filesystem::path& dir);

}  // namespace dtbench
