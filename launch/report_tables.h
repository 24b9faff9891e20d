#pragma once
// The tables of `dtbench report`: for one run its phase breakdown (first epoch and the rest), its
// workers, its epochs and its time to accuracy; for several runs one comparison row per run with
// ratios against a baseline.
#include <string>
#include <vector>

#include "launch/report_run.h"
#include "launch/report_table.h"

namespace dtbench {

// "INCOMPLETE (status failed: <error>)" for a run that did not complete, else "".
std::string incomplete_note(const RunRecord& run);

std::vector<ReportTable> single_run_tables(const RunRecord& run);
// `baseline` indexes `runs`.
std::vector<ReportTable> comparison_tables(const std::vector<RunRecord>& runs, size_t baseline);

}  // namespace dtbench
