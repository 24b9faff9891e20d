#pragma once
// phases.csv: one row per run x epoch x worker x phase, for spreadsheets and plotting scripts.
// Columns: run,transport,world,epoch,worker,phase,mean_ms,median_ms,p95_ms,sum_s. worker is "all"
// for the epochs of report.json and the rank for those of each worker-<rank>.json.
#include <string>
#include <vector>

#include "launch/report/run_record.h"

namespace dtbench {

inline constexpr const char* kPhasesCsvHeader = "run,transport,world,epoch,worker,phase,mean_ms,median_ms,p95_ms,sum_s";

std::string phases_csv(const std::vector<RunRecord>& runs);

// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(const std::string& text);

}  // namespace dtbench
