#include "launch/report_tables.h"

#include <algorithm>

#include <fmt/format.h>

namespace dtbench {

namespace {

std::string ms(double seconds) { return fmt::format("{:.3f}", 1e3 * seconds); }
std::string percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }
std::string share(double part, double whole) { return whole > 0 ? percent(part / whole) : "-"; }

ReportTable breakdown_table(const RunRecord& run) {
  ReportTable table = titled_table(fmt::format("Per-phase breakdown of {}, mean ms per step", run.name),
                                   {"phase", "epoch 1 ms", "share"});
  const auto first = mean_phases({run.epochs.begin(), run.epochs.begin() + 1}, 0);
  const bool rest = run.epochs.size() > 1;
  const auto later = mean_phases(run.epochs, 1);
  if (rest) {
    table.header.push_back(run.epochs.size() == 2 ? std::string("epoch 2 ms")
                                                : fmt::format("epochs 2-{} ms", run.epochs.size()));
    table.header.push_back("share");
  }
  for (size_t k = 0; k < kReportPhaseCount; ++k) {
    std::vector<std::string> row = {std::string(kReportPhases[k]), ms(first[k]), share(first[k], first[kStepIndex])};
    if (rest) {
      row.push_back(ms(later[k]));
      row.push_back(share(later[k], later[kStepIndex]));
    }
    table.rows.push_back(row);
  }
  table.note = "epoch 1 includes warm-up; the phases sum to the step";
  return table;
}

ReportTable workers_table(const RunRecord& run) {
  ReportTable table = titled_table("Per worker, mean ms per step over all epochs", {"worker"});
  for (const auto name : kReportPhases) table.header.emplace_back(name);
  for (const auto& w : run.workers) {
    std::vector<std::string> row = {fmt::format("rank {}", w.rank)};
    for (const double mean : w.mean_s) row.push_back(ms(mean));
    table.rows.push_back(row);
  }
  for (const char* what : {"mean", "min", "max"}) {
    std::vector<std::string> row = {std::string(what) + " across workers"};
    for (size_t k = 0; k < kReportPhaseCount; ++k) {
      double low = 1e300, high = -1e300, sum = 0.0;
      for (const auto& w : run.workers) {
        low = std::min(low, w.mean_s[k]);
        high = std::max(high, w.mean_s[k]);
        sum += w.mean_s[k];
      }
      const double value = what[1] == 'e' ? sum / static_cast<double>(run.workers.size()) : what[1] == 'i' ? low : high;
      row.push_back(ms(value));
    }
    table.rows.push_back(row);
  }
  table.note = fmt::format("slowest worker (longest compute per step): rank {}", run.slowest_worker);
  return table;
}

ReportTable epochs_table(const RunRecord& run) {
  ReportTable table = titled_table("Per epoch", {"epoch", "train s", "wall s", "images/s", "train loss",
                                                "train acc", "test loss", "test acc"});
  for (const auto& e : run.epochs) {
    table.rows.push_back({std::to_string(e.epoch), fmt::format("{:.2f}", e.train_seconds),
                          fmt::format("{:.2f}", e.wall_seconds), fmt::format("{:.0f}", e.images_per_second),
                          fmt::format("{:.4f}", e.train_loss), percent(e.train_accuracy),
                          fmt::format("{:.4f}", e.test_loss), percent(e.test_accuracy)});
  }
  table.note = fmt::format("images/s over the run: {:.0f}; wall time {:.2f} s", run.images_per_second,
                           run.wall_seconds);
  return table;
}

ReportTable time_to_accuracy_table(const RunRecord& run) {
  ReportTable table = titled_table("Time to accuracy (wall seconds when test accuracy first reached it)",
                                   {"test accuracy", "wall s", "epoch"});
  for (const int target : {50, 70, 80, 90}) {
    std::vector<std::string> row = {fmt::format("{}%", target), "not reached", "-"};
    for (const auto& e : run.epochs) {
      if (100.0 * e.test_accuracy >= target) {
        row = {fmt::format("{}%", target), fmt::format("{:.2f}", e.wall_seconds), std::to_string(e.epoch)};
        break;
      }
    }
    table.rows.push_back(row);
  }
  return table;
}

std::string ratio(double value, double baseline) {
  return baseline > 0 ? fmt::format("{:.2f}x", value / baseline) : "-";
}

}  // namespace

std::string incomplete_note(const RunRecord& run) {
  if (run.complete()) return "";
  return run.error.empty() ? fmt::format("INCOMPLETE (status {})", run.status)
                           : fmt::format("INCOMPLETE (status {}: {})", run.status, run.error);
}

std::vector<ReportTable> single_run_tables(const RunRecord& run) {
  if (run.epochs.empty()) {
    ReportTable table = titled_table(fmt::format("{}: no completed epoch", run.name));
    table.note = incomplete_note(run);
    return {table};
  }
  std::vector<ReportTable> tables = {breakdown_table(run)};
  if (!run.workers.empty()) tables.push_back(workers_table(run));
  tables.push_back(epochs_table(run));
  tables.push_back(time_to_accuracy_table(run));
  return tables;
}

std::vector<ReportTable> comparison_tables(const std::vector<RunRecord>& runs, size_t baseline) {
  ReportTable table = titled_table(
      fmt::format("Comparison, mean ms per step over all epochs (baseline: {})", runs[baseline].name),
      {"run", "status", "transport", "world", "step ms"});
  for (size_t k = 0; k < kStepIndex; ++k) table.header.push_back(fmt::format("{} ms", kReportPhases[k]));
  for (const char* h : {"images/s", "final acc", "step ratio", "images/s ratio"}) table.header.emplace_back(h);
  const auto base = mean_phases(runs[baseline].epochs, 0);
  for (const auto& run : runs) {
    const auto mean = mean_phases(run.epochs, 0);
    std::vector<std::string> row = {run.name, run.complete() ? "complete" : "INCOMPLETE", run.transport,
                                    std::to_string(run.world), ms(mean[kStepIndex])};
    for (size_t k = 0; k < kStepIndex; ++k) row.push_back(ms(mean[k]));
    row.push_back(fmt::format("{:.0f}", run.images_per_second));
    row.push_back(percent(run.final_accuracy()));
    row.push_back(ratio(mean[kStepIndex], base[kStepIndex]));
    row.push_back(ratio(run.images_per_second, runs[baseline].images_per_second));
    table.rows.push_back(row);
  }
  table.note = "ratios are against the baseline: step ratio < 1 and images/s ratio > 1 are faster";
  for (const auto& run : runs) {
    if (!run.complete()) table.note += fmt::format("; {}: {}", run.name, incomplete_note(run));
  }
  return {table};
}

}  // namespace dtbench
