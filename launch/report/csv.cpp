#include "launch/report/csv.h"

#include <fmt/format.h>

namespace dtbench {

namespace {

void append_rows(std::string& out, const RunRecord& run, const std::string& worker,
                 const std::vector<EpochRecord>& epochs) {
  for (const auto& e : epochs) {
    for (size_t k = 0; k < kReportPhaseCount; ++k) {
      const PhaseRecord& p = e.phases[k];
      // Shortest round-trip formatting: the phase means sum to the step mean to full precision.
      out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", csv_field(run.name), csv_field(run.transport), run.world,
                         e.epoch, worker, kReportPhases[k], 1e3 * p.mean_s, 1e3 * p.median_s, 1e3 * p.p95_s,
                         p.sum_s);
    }
  }
}

}  // namespace

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string phases_csv(const std::vector<RunRecord>& runs) {
  std::string out = std::string(kPhasesCsvHeader) + "\n";
  for (const auto& run : runs) {
    append_rows(out, run, "all", run.epochs);
    for (size_t w = 0; w < run.worker_epochs.size(); ++w) {
      append_rows(out, run, std::to_string(run.workers[w].rank), run.worker_epochs[w]);
    }
  }
  return out;
}

}  // namespace dtbench
