// dtbench sweep: options and wiring; the sweep itself is launch/sweep/sweep.h.
#include "launch/commands.h"
#include "launch/sweep/plan.h"
#include "launch/sweep/sweep.h"

namespace dtbench {

void add_sweep_command(CLI::App& app) {
  auto* command = app.add_subcommand("sweep", "Run a sweep blueprint: every configuration, repeated, with statistics");
  auto options = std::make_shared<SweepOptions>();
  command->add_option("file", options->file, "Sweep blueprint YAML (configs/sweeps/...)")->required();
  command->add_option("--set", options->overrides, "Blueprint key for every run: --set steps=20");
  command->add_option("--output", options->output, "Directory that holds the sweep's directory (default: its output)");
  command->add_option("--repetitions", options->repetitions, "Measured runs per configuration (default: the sweep's)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  command->add_option("--warmup", options->warmup, "Warm-up runs per configuration (default: the sweep's)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  command->add_option("--cap-s", options->cap_s, "Wall-clock cap per run in seconds (default: the sweep's)")
      ->check(CLI::Range(1e-3, kLongestCapSeconds));
  command->add_flag("--dry-run", options->dry_run, "List the configurations and what is missing; run nothing");
  command->add_flag("!--no-report", options->report, "Skip the breakdown report over the runs");
  command->callback([options] { run_sweep(*options); });
}

}  // namespace dtbench
