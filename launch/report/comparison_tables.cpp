// The tables comparing several runs, each row against the baseline run.
#include <algorithm>

#include <fmt/format.h>

#include "core/profile/profiler.h"
#include "launch/report/format.h"
#include "launch/report/tables.h"

namespace dtbench {

namespace {

ReportTable steps_table(const std::vector<RunRecord>& runs, size_t baseline) {
  ReportTable table = titled_table(
      fmt::format("Comparison, mean ms per step over the steady epochs (epoch 1 left out as warm-up where a run "
                  "has more); images/s over the run's training span (baseline: {})",
                  runs[baseline].name),
      {"run", "status", "transport", "world", "step ms"});
  for (size_t k = 0; k < kStepIndex; ++k) table.header.push_back(fmt::format("{} ms", kReportPhases[k]));
  for (const char* h : {"images/s (all workers)", "final acc", "step ratio", "images/s ratio"}) table.header.emplace_back(h);
  const auto steady = [](const RunRecord& run) {
    return mean_phases(run.epochs, first_steady_epoch(run.epochs.size()));
  };
  const auto base = steady(runs[baseline]);
  for (const auto& run : runs) {
    const auto mean = steady(run);
    std::vector<std::string> row = {run.name, run.complete() ? "complete" : "INCOMPLETE", run.transport,
                                    std::to_string(run.world), ms_text(mean[kStepIndex])};
    for (size_t k = 0; k < kStepIndex; ++k) row.push_back(ms_text(mean[k]));
    row.push_back(fmt::format("{:.0f}", run.images_per_second));
    row.push_back(percent_text(run.final_accuracy()));
    row.push_back(ratio_text(mean[kStepIndex], base[kStepIndex]));
    row.push_back(ratio_text(run.images_per_second, runs[baseline].images_per_second));
    table.rows.push_back(row);
  }
  table.note = "ratios are against the baseline: step ratio < 1 and images/s ratio > 1 are faster";
  for (const auto& run : runs) {
    if (!run.complete()) table.note += fmt::format("; {}: {}", run.name, incomplete_note(run));
  }
  return table;
}

double later_epoch_seconds(const RunRecord& run) {
  double sum = 0.0;
  for (size_t i = 1; i < run.epochs.size(); ++i) sum += run.epochs[i].train_seconds;
  return run.epochs.size() > 1 ? sum / static_cast<double>(run.epochs.size() - 1) : 0.0;
}

// Speed beside accuracy, so that a transport that is faster per step but reaches a target later,
// or never, is seen as such.
ReportTable time_and_accuracy_table(const std::vector<RunRecord>& runs, const ReportSettings& settings) {
  const RunRecord& base = runs[settings.baseline];
  ReportTable table = titled_table(fmt::format("Time and accuracy (baseline: {})", base.name),
                                   {"run", "epoch 1 s", "later epochs s", "wall s", "wall ratio", "final acc",
                                    "best acc"});
  for (const double target : settings.target_accuracies) table.header.push_back("to " + percent_text(target));
  for (const auto& run : runs) {
    double best = 0.0;
    for (const auto& e : run.epochs) best = std::max(best, e.test_accuracy);
    std::vector<std::string> row = {run.name,
                                    run.epochs.empty() ? "-" : seconds_text(run.epochs.front().train_seconds),
                                    run.epochs.size() > 1 ? seconds_text(later_epoch_seconds(run)) : "-",
                                    seconds_text(run.wall_seconds), ratio_text(run.wall_seconds, base.wall_seconds),
                                    percent_text(run.final_accuracy()), percent_text(best)};
    for (const double target : settings.target_accuracies) {
      const EpochRecord* reached = first_epoch_reaching(run, target);
      const EpochRecord* base_reached = first_epoch_reaching(base, target);
      if (reached == nullptr) {
        row.push_back("not reached");
      } else if (base_reached == nullptr) {
        row.push_back(seconds_text(reached->wall_seconds) + " s");
      } else {
        row.push_back(fmt::format("{} s ({})", seconds_text(reached->wall_seconds),
                                  ratio_text(reached->wall_seconds, base_reached->wall_seconds)));
      }
    }
    table.rows.push_back(row);
  }
  table.note = "epoch times are training time (the sum of the steps); wall s and time to accuracy count from the "
               "start of training to the end of an epoch's evaluation; ratios are against the baseline";
  return table;
}

ReportTable comm_comparison_table(const std::vector<RunRecord>& runs) {
  ReportTable table = titled_table("Communication per step over the steady epochs (epoch 1 left out where a run has "
                                   "more)",
                                   {"run", "transport", "exposed ms", "total ms", "hidden by overlap", "wait ms",
                                    "transfer ms", "push ms", "pull ms", "sent / step", "received / step"});
  for (const auto& run : runs) {
    const CommRecord c = mean_comm(run.epochs, first_steady_epoch(run.epochs.size()));
    table.rows.push_back({run.name, run.transport, ms_text(c.comm_s), ms_text(c.comm_total_s),
                          share_text(c.comm_total_s - c.comm_s, c.comm_total_s), ms_text(c.wait_s),
                          ms_text(c.transfer_s), ms_text(c.push_s), ms_text(c.pull_s), bytes_text(c.bytes_sent),
                          bytes_text(c.bytes_received)});
  }
  table.note = "allreduce splits comm into wait (for the last rank) and transfer; parameter servers into push, wait "
               "and pull";
  return table;
}

}  // namespace

std::vector<ReportTable> comparison_tables(const std::vector<RunRecord>& runs, const ReportSettings& settings) {
  std::vector<ReportTable> tables = {steps_table(runs, settings.baseline), time_and_accuracy_table(runs, settings),
                                     comm_comparison_table(runs)};
  const bool any_resources =
      std::any_of(runs.begin(), runs.end(), [](const auto& run) { return !run.resources.empty(); });
  if (any_resources) tables.push_back(resources_table(runs));
  return tables;
}

}  // namespace dtbench
