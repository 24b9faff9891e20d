#pragma once
// report.html: one self-contained page (inline CSS and SVG, nothing fetched, no script) with the
// charts of charts.h and the same tables as the terminal and report.md.
#include <string>
#include <vector>

#include "launch/report/run_record.h"
#include "launch/report/settings.h"
#include "launch/report/table.h"
#include "launch/report/verdict_section.h"

namespace dtbench {

// The provenance header, verdict and warnings of `summary` open the page.
std::string report_html(const std::vector<RunRecord>& runs, const ReportSummary& summary,
                        const std::vector<ReportTable>& tables,
                        const ReportSettings& settings);

}  // namespace dtbench
