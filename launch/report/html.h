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

// A sweep's statistics (sweep_section.h): its tables and its charts, one per workload.
struct SweepPart {
  std::vector<ReportTable> tables{};
  std::vector<std::string> charts{};
};

// The provenance header, verdict and warnings of `summary` open the page; a sweep's charts (one
// per workload) follow; the parameter servers' staleness histograms sit with the phases.
std::string report_html(const std::vector<RunRecord>& runs, const ReportSummary& summary,
                        const std::vector<ReportTable>& tables,
                        const ReportSettings& settings, const SweepPart& sweep = {},
                        const std::vector<std::string>& staleness_charts = {});

}  // namespace dtbench
