#pragma once
// The tables of `dtbench report`. For one run: its phase breakdown (first epoch apart), the comm
// split, its workers side by side, its epochs, time to accuracy (and per epoch, DAWNBench style)
// and resources. For several runs: one row per run with ratios against a baseline, time and
// accuracy, the comm split and resources.
#include <string>
#include <vector>

#include "launch/report/run_record.h"
#include "launch/report/settings.h"
#include "launch/report/table.h"

namespace dtbench {

// "INCOMPLETE (status failed: <error>)" for a run that did not complete, else "".
std::string incomplete_note(const RunRecord& run);

std::vector<ReportTable> single_run_tables(const RunRecord& run, const ReportSettings& settings);
std::vector<ReportTable> comparison_tables(const std::vector<RunRecord>& runs, const ReportSettings& settings);

// One row per worker of every run: CPU, memory, transport bytes and GPU (or why there is none).
ReportTable resources_table(const std::vector<RunRecord>& runs);

// The first epoch whose test accuracy reached `target` (a fraction), or null; always null for a
// run that diverged (run_warnings.h).
const EpochRecord* first_epoch_reaching(const RunRecord& run, double target);
// "epoch 2" for one later epoch, "epochs 2-5" for several.
std::string later_epochs_label(size_t epochs);

}  // namespace dtbench
