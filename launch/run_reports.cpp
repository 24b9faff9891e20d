#include "launch/run_reports.h"

#include <fmt/format.h>

#include "launch/report/network.h"
#include "launch/report/run_span.h"

namespace dtbench {

nlohmann::json run_network(const std::vector<std::string>& worker_reports, const std::string& transport) {
  std::vector<nlohmann::json> reports;
  for (const auto& report : worker_reports) reports.push_back(nlohmann::json::parse(report, nullptr, false));
  return network_json(reports, transport);
}

void RunReports::open(RunDirectory run) {
  const std::lock_guard lock(mutex_);
  run_.emplace(std::move(run));
  summary_.run_id = run_->id();
}

void RunReports::set_workers(std::vector<std::string> workers) {
  const std::lock_guard lock(mutex_);
  workers_ = std::move(workers);
}

void RunReports::note_traffic() {
  const std::lock_guard lock(mutex_);
  summary_.network["interfaces"] = traffic_.since_start();
}

void RunReports::write() {
  const std::lock_guard lock(mutex_);
  write_locked();
}

void RunReports::finish(const std::string& status, const std::string& error) {
  const std::lock_guard lock(mutex_);
  summary_.status = status;
  // A run that never reached its first step says so: nothing in it was measured.
  summary_.error = error.empty() || training_started_ ? error : "failed at start-up, before the first step: " + error;
  sampler_.stop();
  write_locked();
}

void RunReports::write_locked() {
  if (!run_) return;  // rank 0 has not named the directory yet
  summary_.network["interfaces"] = traffic_.since_start();
  nlohmann::json own = report_json(summary_);
  own["transport_summary"] = transport_.summary();
  own["resources"] = sampler_.summary();
  run_->write(fmt::format("worker-{}.json", summary_.rank), own.dump(2) + "\n");
  if (summary_.rank != 0) return;
  own["network"] = workers_.empty() ? network_json({own}, summary_.transport) : run_network(workers_, summary_.transport);
  if (!workers_.empty()) own["workers"] = workers_json(workers_);
  const std::optional<RunSpan> span = run_span_of(own, workers_);
  own["run"] = span ? run_span_json(*span) : nlohmann::json();
  run_->write("report.json", own.dump(2) + "\n");
}

}  // namespace dtbench
