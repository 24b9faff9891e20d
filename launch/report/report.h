#pragma once
// launch/report — everything that reads run directories and writes what people read: report.json
// and the console breakdown of a training run (run_summary.h); report.md, phases.csv, report.html
// and trace.json of `dtbench report` (this header); the tables, SVG charts, HTML page and trace
// merge they are drawn with; and the statistics of repeated runs.
// May include: core, launch/monitor. Never the commands, sweep or bench.
#include <string>
#include <vector>

namespace dtbench {

struct ReportOptions {
  std::vector<std::string> run_dirs;
  std::string out;   // default: the run directory for one run, the current directory for several
  int baseline = 1;  // 1-based index into run_dirs
  std::vector<double> target_percents = {50, 70, 80, 90};
  bool log_scale = false;
  std::vector<std::string> traces;  // more trace files or directories of the one run (its servers')
};

// Loads the runs, prints their tables and writes report.md, phases.csv, report.html (and
// trace.json when the runs left timelines) into options.out. InputError for a bad option or run.
void write_report(const ReportOptions& options);

}  // namespace dtbench
