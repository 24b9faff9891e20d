#pragma once
// report.html: one self-contained page (inline CSS and SVG, nothing fetched, no script) with the
// charts of charts.h and the same tables as the terminal and report.md.
#include <string>
#include <vector>

#include "launch/report/run_record.h"
#include "launch/report/settings.h"
#include "launch/report/table.h"

namespace dtbench {

std::string report_html(const std::vector<RunRecord>& runs, const std::vector<ReportTable>& tables,
                        const ReportSettings& settings);

}  // namespace dtbench
