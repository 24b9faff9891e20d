#pragma once
// The top of report.md and report.html, what a reader who opens only that gets: what was compared
// (the provenance header), the verdict (verdict.h) and the warnings that qualify it
// (run_warnings.h), as plain sentences.
#include <string>
#include <utility>
#include <vector>

#include "launch/report/run_record.h"
#include "launch/report/verdict.h"

namespace dtbench {

struct WorkloadVerdict {
  std::string workload;  // "" when the runs share one
  Verdict verdict;
};

struct ReportSummary {
  std::vector<std::pair<std::string, std::string>> header;  // ("Model", "lenet5, 61,706 parameters")
  std::vector<WorkloadVerdict> verdicts;  // one per workload, in order of appearance
  std::vector<std::string> warnings;  // per run ("ring x3 (run name): ...") and the verdict's cautions
};

// `labels`: each run's configuration label (configuration_label when empty); `workloads`: each
// run's workload, judged apart (none: one verdict). A warning that several runs share is said once.
ReportSummary summarize_runs(const std::vector<RunRecord>& runs, const std::vector<double>& targets,
                             const std::vector<std::string>& labels = {},
                             const std::vector<std::string>& workloads = {});

std::string summary_markdown(const ReportSummary& summary);
std::string summary_html(const ReportSummary& summary);
// For the console: the warnings alone, one "warning: ..." line each.
std::string warnings_text(const std::vector<std::string>& warnings);

}  // namespace dtbench
