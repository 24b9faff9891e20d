// The tables of one run.
#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "comm/transport_catalogue.h"
#include "launch/report/format.h"
#include "launch/report/run_warnings.h"
#include "launch/report/tables.h"

namespace dtbench {

namespace {

std::string phase_label(size_t k) {
  return kReportPhases[k] == "comm" ? "comm (exposed)" : std::string(kReportPhases[k]);
}

ReportTable breakdown_table(const RunRecord& run) {
  ReportTable table = titled_table(fmt::format("Per-phase breakdown of {}, mean ms per step", run.name),
                                   {"phase", "epoch 1 ms", "share"});
  const auto first = mean_phases({run.epochs.begin(), run.epochs.begin() + 1}, 0);
  const bool rest = run.epochs.size() > 1;
  const auto later = mean_phases(run.epochs, 1);
  if (rest) {
    table.header.push_back(later_epochs_label(run.epochs.size()) + " ms");
    table.header.push_back("share");
  }
  for (size_t k = 0; k < kReportPhaseCount; ++k) {
    std::vector<std::string> row = {phase_label(k), ms_text(first[k]), share_text(first[k], first[kStepIndex])};
    if (rest) {
      row.push_back(ms_text(later[k]));
      row.push_back(share_text(later[k], later[kStepIndex]));
    }
    table.rows.push_back(row);
  }
  table.note = rest ? "epoch 1 is warm-up, left out of the steady epochs; the phases sum to the step"
                    : "one epoch: nothing is left out as warm-up; the phases sum to the step";
  return table;
}

// The comm split, one row per quantity; parameter servers split into push / wait / pull,
// allreduce into wait / transfer.
ReportTable comm_table(const RunRecord& run) {
  ReportTable table = titled_table(fmt::format("Communication of {} ({}), per step", run.name, run.transport),
                                   {"", "epoch 1"});
  const bool rest = run.epochs.size() > 1;
  if (rest) table.header.push_back(later_epochs_label(run.epochs.size()));
  const std::vector<CommRecord> columns = {mean_comm({run.epochs.begin(), run.epochs.begin() + 1}, 0),
                                           mean_comm(run.epochs, 1)};
  auto add = [&](const std::string& label, const std::function<std::string(const CommRecord&)>& cell) {
    std::vector<std::string> row = {label, cell(columns[0])};
    if (rest) row.push_back(cell(columns[1]));
    table.rows.push_back(row);
  };
  add("exposed ms (the comm phase)", [](const CommRecord& c) { return ms_text(c.comm_s); });
  add("total ms (with what overlapped backward)", [](const CommRecord& c) { return ms_text(c.comm_total_s); });
  add("hidden by overlap", [](const CommRecord& c) { return share_text(c.comm_total_s - c.comm_s, c.comm_total_s); });
  if (run.parameter_server()) {
    add("push ms", [](const CommRecord& c) { return ms_text(c.push_s); });
    add("wait ms (other workers, the update)", [](const CommRecord& c) { return ms_text(c.wait_s); });
    add("pull ms", [](const CommRecord& c) { return ms_text(c.pull_s); });
  } else {
    add("wait ms (for the last rank)", [](const CommRecord& c) { return ms_text(c.wait_s); });
    add("transfer ms", [](const CommRecord& c) { return ms_text(c.transfer_s); });
  }
  if (columns[0].d2h_s + columns[1].d2h_s + columns[0].h2d_s + columns[1].h2d_s > 0) {  // a model on a device
    add("of which d2h ms (gradients to the host)", [](const CommRecord& c) { return ms_text(c.d2h_s); });
    add("of which h2d ms (results to the device)", [](const CommRecord& c) { return ms_text(c.h2d_s); });
  }
  add("sent per step", [](const CommRecord& c) { return bytes_text(c.bytes_sent); });
  add("received per step", [](const CommRecord& c) { return bytes_text(c.bytes_received); });
  table.note = "exposed is what the step waited for; total includes communication that overlapped backward";
  return table;
}

// A column of the workers table: its header and how to read it from a worker's means.
struct WorkerColumn {
  std::string header;
  std::function<double(const WorkerMeans&)> seconds;
};

std::vector<WorkerColumn> worker_columns(const RunRecord& run) {
  std::vector<WorkerColumn> columns;
  for (size_t k = 0; k < kReportPhaseCount; ++k) {
    columns.push_back({k == kStepIndex ? "step" : phase_label(k), [k](const WorkerMeans& w) { return w.mean_s[k]; }});
  }
  columns.push_back({"comm total", [](const WorkerMeans& w) { return w.comm.comm_total_s; }});
  if (run.parameter_server()) {
    columns.push_back({"push", [](const WorkerMeans& w) { return w.comm.push_s; }});
    columns.push_back({"wait", [](const WorkerMeans& w) { return w.comm.wait_s; }});
    columns.push_back({"pull", [](const WorkerMeans& w) { return w.comm.pull_s; }});
  } else {
    columns.push_back({"wait", [](const WorkerMeans& w) { return w.comm.wait_s; }});
    columns.push_back({"transfer", [](const WorkerMeans& w) { return w.comm.transfer_s; }});
  }
  return columns;
}

ReportTable workers_table(const RunRecord& run) {
  ReportTable table = titled_table("Per worker, mean ms per step over the steady epochs (epoch 1 left out where there "
                                   "are more)", {"worker"});
  const auto columns = worker_columns(run);
  for (const auto& column : columns) table.header.push_back(column.header);
  for (const auto& w : run.workers) {
    std::vector<std::string> row = {fmt::format("rank {}", w.rank)};
    for (const auto& column : columns) row.push_back(ms_text(column.seconds(w)));
    table.rows.push_back(row);
  }
  std::vector<std::string> mean = {"mean across workers"}, low = {"min across workers"}, high = {"max across workers"};
  for (const auto& column : columns) {
    std::vector<double> values;
    for (const auto& w : run.workers) values.push_back(column.seconds(w));
    double sum = 0.0;
    for (const double v : values) sum += v;
    mean.push_back(ms_text(sum / static_cast<double>(values.size())));
    low.push_back(ms_text(*std::min_element(values.begin(), values.end())));
    high.push_back(ms_text(*std::max_element(values.begin(), values.end())));
  }
  table.rows.insert(table.rows.end(), {mean, low, high});
  table.note = fmt::format("slowest worker (longest compute per step): rank {}", run.slowest_worker);
  return table;
}

ReportTable epochs_table(const RunRecord& run) {
  ReportTable table = titled_table("Per epoch", {"epoch", "train s", "wall s", "images/s per worker", "train loss",
                                                "train acc", "test loss", "test acc"});
  for (const auto& e : run.epochs) {
    table.rows.push_back({std::to_string(e.epoch), seconds_text(e.train_seconds), seconds_text(e.wall_seconds),
                          fmt::format("{:.0f}", e.images_per_second), fmt::format("{:.4f}", e.train_loss),
                          percent_text(e.train_accuracy), fmt::format("{:.4f}", e.test_loss),
                          percent_text(e.test_accuracy)});
  }
  table.note = fmt::format("images/s over the run, all workers: {:.0f} (their images over the run's training span, "
                           "warm-up epoch left out where there are more); run time {:.2f} s (first worker's start to "
                           "last worker's end); epoch 1 trained in {:.2f} s (with warm-up)",
                           run.images_per_second, run.wall_seconds, run.epochs.front().train_seconds);
  if (run.epochs.size() > 1) {
    double later = 0.0;
    for (size_t i = 1; i < run.epochs.size(); ++i) later += run.epochs[i].train_seconds;
    table.note += fmt::format(", {} in {:.2f} s each (mean)", later_epochs_label(run.epochs.size()),
                              later / static_cast<double>(run.epochs.size() - 1));
  }
  return table;
}

ReportTable time_to_accuracy_table(const RunRecord& run, const ReportSettings& settings) {
  ReportTable table = titled_table("Time to accuracy (wall seconds when test accuracy first reached it)",
                                   {"test accuracy", "wall s", "epoch"});
  for (const double target : settings.target_accuracies) {
    const EpochRecord* reached = first_epoch_reaching(run, target);
    table.rows.push_back({percent_text(target), reached ? seconds_text(reached->wall_seconds) : "not reached",
                          reached ? std::to_string(reached->epoch) : "-"});
  }
  return table;
}

// As DAWNBench submissions list it: for every epoch the wall time so far and the test accuracy,
// with the targets first reached there.
ReportTable accuracy_by_epoch_table(const RunRecord& run, const ReportSettings& settings) {
  ReportTable table = titled_table("Time to accuracy per epoch (DAWNBench style)",
                                   {"epoch", "wall s", "test acc", "best so far", "targets first reached"});
  double best = 0.0;
  size_t next_target = 0;
  for (const auto& e : run.epochs) {
    best = std::max(best, e.test_accuracy);
    std::vector<std::string> reached;
    for (; next_target < settings.target_accuracies.size() && best >= settings.target_accuracies[next_target];
         ++next_target) {
      reached.push_back(percent_text(settings.target_accuracies[next_target]));
    }
    table.rows.push_back({std::to_string(e.epoch), seconds_text(e.wall_seconds), percent_text(e.test_accuracy),
                          percent_text(best), reached.empty() ? "-" : fmt::format("{}", fmt::join(reached, " "))});
  }
  table.note = "wall s counts from the start of training to the end of the epoch's evaluation";
  return table;
}

}  // namespace

std::string incomplete_note(const RunRecord& run) {
  if (run.complete()) return "";
  return run.error.empty() ? fmt::format("INCOMPLETE (status {})", run.status)
                           : fmt::format("INCOMPLETE (status {}: {})", run.status, run.error);
}

std::string later_epochs_label(size_t epochs) {
  return epochs == 2 ? std::string("epoch 2") : fmt::format("epochs 2-{}", epochs);
}

const EpochRecord* first_epoch_reaching(const RunRecord& run, double target) {
  if (diverged(run)) return nullptr;  // an accuracy it could not keep is no accuracy reached
  for (const auto& e : run.epochs) {
    if (e.test_accuracy >= target) return &e;
  }
  return nullptr;
}

std::vector<ReportTable> single_run_tables(const RunRecord& run, const ReportSettings& settings) {
  if (run.epochs.empty()) {
    ReportTable table = titled_table(fmt::format("{}: no completed epoch", run.name));
    table.note = incomplete_note(run);
    return {table};
  }
  std::vector<ReportTable> tables = {breakdown_table(run)};
  if (!exchanges_nothing(run.transport)) tables.push_back(comm_table(run));
  if (!run.workers.empty()) tables.push_back(workers_table(run));
  tables.push_back(epochs_table(run));
  tables.push_back(time_to_accuracy_table(run, settings));
  tables.push_back(accuracy_by_epoch_table(run, settings));
  if (!run.resources.empty()) tables.push_back(resources_table({run}));
  return tables;
}

}  // namespace dtbench
