// dtbench report: options and wiring; the report itself is launch/report/report.h.
#include "launch/commands.h"
#include "launch/report/report.h"

namespace dtbench {

void add_report_command(CLI::App& app) {
  auto* command = app.add_subcommand("report", "Tables and charts of a run, or a comparison of several runs");
  auto options = std::make_shared<ReportOptions>();
  command->add_option("run_dirs", options->run_dirs, "Run directories (each holding report.json)")->required();
  command->add_option("--out", options->out,
                      "Where to write report.md, phases.csv and report.html (default: the run directory for one "
                      "run, the current directory for several)");
  command->add_option("--baseline", options->baseline, "The run (1 = first) the comparison's ratios are against");
  command->add_option("--target-accuracy", options->target_percents,
                      "Test accuracies (percent, comma-separated) to report the time to reach (default: 50,70,80,90)")
      ->delimiter(',')
      ->allow_extra_args(false);
  command->add_flag("--log-scale", options->log_scale, "Draw the time chart on a logarithmic axis");
  command->add_option("--traces", options->traces,
                      "More trace files or directories of the run to merge into trace.json (the parameter servers' "
                      "--output, holding trace-server-<shard>.json)");
  command->callback([options] { write_report(*options); });
}

}  // namespace dtbench
