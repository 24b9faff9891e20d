#include "launch/report/run_summary.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "launch/report/run_span.h"

namespace dtbench {

namespace {

nlohmann::json stats_json(const PhaseStats& s) {
  return {{"sum_s", s.sum}, {"mean_s", s.mean}, {"median_s", s.median},
          {"p95_s", s.p95}, {"min_s", s.min},   {"max_s", s.max}};
}

nlohmann::json sync_json(const SyncTimes& t) {
  return {{"comm_s", t.comm},         {"comm_total_s", t.comm_total}, {"update_s", t.update},
          {"wait_s", t.wait},         {"transfer_s", t.transfer},
          {"push_s", t.push},         {"pull_s", t.pull},
          {"d2h_s", t.d2h},           {"h2d_s", t.h2d},
          {"bytes_sent", t.bytes_sent}, {"bytes_received", t.bytes_received}};
}

nlohmann::json operators_json(const std::map<std::string, OperatorTime>& operators) {
  nlohmann::json result = nlohmann::json::object();
  for (const auto& [kind, t] : operators) {
    result[kind] = {{"forward_s", t.forward_seconds}, {"backward_s", t.backward_seconds},
                    {"forward_calls", t.forward_calls}, {"backward_calls", t.backward_calls}};
  }
  return result;
}

// Means over the epoch's steps, seconds from the step's backward start.
nlohmann::json comm_timings_json(const std::vector<CommTiming>& pieces) {
  nlohmann::json result = nlohmann::json::array();
  for (const CommTiming& p : pieces) {
    result.push_back({{"what", p.what}, {"index", p.index}, {"bytes", p.bytes}, {"steps", p.steps},
                      {"ready_s", p.ready_s}, {"start_s", p.start_s}, {"end_s", p.end_s}});
  }
  return result;
}

// Each step's time less its communication: what this worker computed, a sample of the
// distribution a synchronous step of N workers takes the slowest of N draws from (predict's
// straggler term). At most kComputeSamples, evenly spaced over the epoch, so a long epoch stays small.
constexpr size_t kComputeSamples = 1000;
nlohmann::json compute_samples_json(const std::vector<StepTimes>& steps) {
  nlohmann::json result = nlohmann::json::array();
  const size_t stride = (steps.size() + kComputeSamples - 1) / kComputeSamples;
  for (size_t k = 0; k < steps.size(); k += std::max<size_t>(stride, 1)) {
    result.push_back(steps[k].total - steps[k][Phase::Comm]);
  }
  return result;
}

nlohmann::json epoch_json(const EpochResult& e) {
  nlohmann::json epoch = {{"epoch", e.epoch},
          {"steps", e.phases.steps},
          {"images", e.images},
          {"train_seconds", e.train_seconds},
          {"images_per_second", e.images_per_second},
          {"wall_seconds", e.wall_seconds},
          {"span_seconds", e.span_seconds},
          {"between_seconds", e.between_seconds},
          {"evaluation_seconds", e.evaluation_seconds},
          {"start_unix_s", e.start_unix_seconds},
          {"steps_end_unix_s", e.steps_end_unix_seconds},
          {"end_unix_s", e.end_unix_seconds},
          {"train_loss", e.train.loss},
          {"train_accuracy", e.train.accuracy},
          {"test_loss", e.test.loss},
          {"test_accuracy", e.test.accuracy},
          {"test_samples", e.test.samples},
          {"phases", phases_json(e.phases)},
          {"comm_split", sync_json(e.sync_total)},
          {"slowest_rank_steps", e.slowest_rank_steps}};
  if (!e.operators.empty()) epoch["operators"] = operators_json(e.operators);
  if (!e.comm_timings.empty()) epoch["comm_timings"] = comm_timings_json(e.comm_timings);
  if (!e.steps.empty()) epoch["step_compute_s"] = compute_samples_json(e.steps);
  return epoch;
}

// Phase statistics over epochs [first, end): exact percentiles of all their steps together.
EpochPhases combine(const std::vector<EpochResult>& epochs, size_t first) {
  std::vector<StepTimes> steps;
  for (size_t i = first; i < epochs.size(); ++i) {
    steps.insert(steps.end(), epochs[i].steps.begin(), epochs[i].steps.end());
  }
  return summarize_steps(steps);
}

// The training wall time and what it went to, over every epoch.
struct WallSplit {
  double steps = 0.0, between = 0.0, evaluation = 0.0, wall = 0.0;
};

WallSplit wall_split(const std::vector<EpochResult>& epochs) {
  WallSplit split;
  for (const auto& e : epochs) {
    split.steps += e.train_seconds;
    split.between += e.between_seconds;
    split.evaluation += e.evaluation_seconds;
    split.wall += e.span_seconds;
  }
  return split;
}

// This worker's own images per second of its steps alone, over the steady epochs.
double step_images_per_second(const std::vector<EpochResult>& epochs) {
  int64_t images = 0;
  double seconds = 0.0;
  for (size_t i = first_steady_epoch(epochs.size()); i < epochs.size(); ++i) {
    images += epochs[i].images;
    seconds += epochs[i].train_seconds;
  }
  return seconds > 0 ? static_cast<double>(images) / seconds : 0.0;
}

void append_phase_rows(std::string& out, const std::string& title, const EpochPhases& p) {
  out += fmt::format("{} ({} steps)\n", title, p.steps);
  out += fmt::format("  {:<10} {:>10} {:>10} {:>10} {:>7}\n", "phase", "mean ms", "median ms", "p95 ms", "share");
  for (size_t k = 0; k < kPhaseCount; ++k) {
    const PhaseStats& s = p.phase[k];
    const double share = p.step.sum > 0 ? 100.0 * s.sum / p.step.sum : 0.0;
    out += fmt::format("  {:<10} {:>10.3f} {:>10.3f} {:>10.3f} {:>6.1f}%\n", kPhaseNames[k],
                       1e3 * s.mean, 1e3 * s.median, 1e3 * s.p95, share);
  }
  out += fmt::format("  {:<10} {:>10.3f} {:>10.3f} {:>10.3f} {:>6.1f}%\n", "step", 1e3 * p.step.mean,
                     1e3 * p.step.median, 1e3 * p.step.p95, 100.0);
}

}  // namespace

nlohmann::json phases_json(const EpochPhases& phases) {
  nlohmann::json result = nlohmann::json::object();
  for (size_t k = 0; k < kPhaseCount; ++k) result[std::string(kPhaseNames[k])] = stats_json(phases.phase[k]);
  result["step"] = stats_json(phases.step);
  return result;
}

nlohmann::json report_json(const RunSummary& s) {
  nlohmann::json epochs = nlohmann::json::array();
  for (const auto& e : s.epochs) epochs.push_back(epoch_json(e));
  nlohmann::json summary = nlohmann::json::object();
  if (!s.epochs.empty()) {
    const EpochPhases first = combine(s.epochs, 0);
    summary["first_epoch_phases"] = phases_json(s.epochs.front().phases);
    if (s.epochs.size() > 1) summary["later_epochs_phases"] = phases_json(combine(s.epochs, 1));
    summary["all_epochs_phases"] = phases_json(first);
    summary["steady_phases"] = phases_json(combine(s.epochs, first_steady_epoch(s.epochs.size())));
    summary["steady_epochs"] = steady_epochs_label(s.epochs.size());
    summary["final_test_accuracy"] = s.epochs.back().test.accuracy;
    summary["final_test_loss"] = s.epochs.back().test.loss;
    // This worker alone, by the run's rule (run_span.h); the run's own figures are in `run`.
    const std::optional<RunSpan> own = run_span({{{"epochs", epochs}}});
    summary["images"] = own ? own->images : 0;
    summary["images_per_second"] = own ? own->images_per_second : 0.0;
    summary["step_images_per_second"] = step_images_per_second(s.epochs);
    const WallSplit split = wall_split(s.epochs);
    summary["wall_split"] = {{"steps_s", split.steps}, {"between_steps_s", split.between},
                             {"evaluation_s", split.evaluation}, {"wall_s", split.wall}};
    const double mean_step = first.step.mean;
    summary["profiler_overhead_estimate"] =
        mean_step > 0 ? Profiler::kClockReadsPerStep * s.clock_read_seconds / mean_step : 0.0;
    // Per-operator timing reads the clock twice per layer call: its cost as a share of a step.
    const EpochResult& last = s.epochs.back();
    if (!last.operators.empty() && last.phases.steps > 0 && mean_step > 0) {
      summary["operator_timing_overhead_estimate"] =
          operator_clock_reads_per_step(last.operators, last.phases.steps) * s.clock_read_seconds / mean_step;
    }
  }
  nlohmann::json report = {
      {"run_id", s.run_id},
      {"status", s.status},
      {"complete", s.status == "complete"},
      {"transport", s.transport},
      {"rank", s.rank},
      {"world", s.world},
      {"blueprint", s.blueprint},
      {"provenance", to_json(s.provenance)},
      {"data", s.data},
      {"model", s.model},
      {"epochs", epochs},
      {"summary", summary},
      {"wall_seconds", s.wall_seconds},
      {"startup_seconds", s.startup_seconds},
      {"autotune_seconds", s.autotune_seconds},
      {"memory", {{"peak_resident_bytes", peak_resident_bytes()}, {"resident_bytes", resident_bytes()}}},
      {"profiler", {{"clock_read_seconds", s.clock_read_seconds},
                    {"clock_reads_per_step", Profiler::kClockReadsPerStep}}},
  };
  if (!s.network.is_null()) report["network"] = s.network;
  if (!s.error.empty()) report["error"] = s.error;
  return report;
}

std::string breakdown_table(const std::vector<EpochResult>& epochs) {
  std::string out;
  if (epochs.empty()) return "no completed epoch\n";
  if (epochs.size() == 1) {
    append_phase_rows(out, "Per-phase breakdown, " + steady_epochs_label(1), epochs.front().phases);
  } else {
    append_phase_rows(out, "Per-phase breakdown, epoch 1 (warm-up)", epochs.front().phases);
    append_phase_rows(out, "Per-phase breakdown, " + steady_epochs_label(epochs.size()), combine(epochs, 1));
  }
  const WallSplit split = wall_split(epochs);
  const auto share = [&](double seconds) { return split.wall > 0 ? 100.0 * seconds / split.wall : 0.0; };
  out += fmt::format("Training wall time {:.3f} s = steps {:.3f} s ({:.1f}%) + between steps {:.3f} s ({:.1f}%)"
                     " + evaluation {:.3f} s ({:.1f}%)\n",
                     split.wall, split.steps, share(split.steps), split.between, share(split.between),
                     split.evaluation, share(split.evaluation));
  return out;
}

namespace {

struct WorkerRow {
  int rank = 0;
  std::array<double, kPhaseCount> phase_mean{};  // seconds per step, the steady epochs
  double step_mean = 0.0;
  double comm_total = 0.0, wait = 0.0, transfer = 0.0, push = 0.0, pull = 0.0;  // seconds per step
  double images_per_second = 0.0;
  int64_t steps_last_to_arrive = 0;
};

std::vector<WorkerRow> worker_rows(const std::vector<std::string>& reports) {
  std::vector<WorkerRow> rows;
  for (const auto& text : reports) {
    const auto report = nlohmann::json::parse(text);
    WorkerRow row;
    row.rank = report.value("rank", 0);
    int64_t steps = 0;
    const auto& epochs = report["epochs"];
    for (size_t e = first_steady_epoch(epochs.size()); e < epochs.size(); ++e) {
      const auto& epoch = epochs[e];
      steps += epoch["steps"].get<int64_t>();
      for (size_t k = 0; k < kPhaseCount; ++k) {
        row.phase_mean[k] += epoch["phases"][std::string(kPhaseNames[k])]["sum_s"].get<double>();
      }
      row.step_mean += epoch["phases"]["step"]["sum_s"].get<double>();
      row.comm_total += epoch["comm_split"]["comm_total_s"].get<double>();
      row.wait += epoch["comm_split"]["wait_s"].get<double>();
      row.transfer += epoch["comm_split"]["transfer_s"].get<double>();
      row.push += epoch["comm_split"]["push_s"].get<double>();
      row.pull += epoch["comm_split"]["pull_s"].get<double>();
    }
    if (steps > 0) {
      for (double& mean : row.phase_mean) mean /= static_cast<double>(steps);
      for (double* total : {&row.step_mean, &row.comm_total, &row.wait, &row.transfer, &row.push, &row.pull}) {
        *total /= static_cast<double>(steps);
      }
    }
    if (report.contains("summary") && report["summary"].contains("images_per_second")) {
      row.images_per_second = report["summary"]["images_per_second"].get<double>();
    }
    // Rank r's own count of the steps at which rank r arrived last sits in every report; use
    // rank 0's view, which every worker shares (the arrival times are exchanged).
    const auto& first = nlohmann::json::parse(reports.front());
    for (const auto& epoch : first["epochs"]) {
      const auto& counts = epoch["slowest_rank_steps"];
      if (static_cast<size_t>(row.rank) < counts.size()) row.steps_last_to_arrive += counts[static_cast<size_t>(row.rank)].get<int64_t>();
    }
    rows.push_back(row);
  }
  return rows;
}

// The worker whose compute (load + forward + backward + update) took longest per step.
int slowest_worker(const std::vector<WorkerRow>& rows) {
  int slowest = 0;
  double worst = -1.0;
  for (const auto& row : rows) {
    const double compute = row.step_mean - row.phase_mean[static_cast<size_t>(Phase::Comm)];
    if (compute > worst) {
      worst = compute;
      slowest = row.rank;
    }
  }
  return slowest;
}

}  // namespace

nlohmann::json workers_json(const std::vector<std::string>& reports) {
  const auto rows = worker_rows(reports);
  nlohmann::json per_worker = nlohmann::json::array();
  for (const auto& row : rows) {
    nlohmann::json phases = nlohmann::json::object();
    for (size_t k = 0; k < kPhaseCount; ++k) phases[std::string(kPhaseNames[k])] = row.phase_mean[k];
    phases["step"] = row.step_mean;
    per_worker.push_back({{"rank", row.rank},
                          {"mean_step_phases_s", phases},
                          {"comm_total_s", row.comm_total},
                          {"wait_s", row.wait},
                          {"transfer_s", row.transfer},
                          {"push_s", row.push},
                          {"pull_s", row.pull},
                          {"images_per_second", row.images_per_second},
                          {"steps_last_to_arrive", row.steps_last_to_arrive}});
  }
  nlohmann::json across = nlohmann::json::object();
  for (size_t k = 0; k <= kPhaseCount; ++k) {
    const std::string name = k < kPhaseCount ? std::string(kPhaseNames[k]) : "step";
    double sum = 0.0, low = 1e300, high = -1e300;
    for (const auto& row : rows) {
      const double value = k < kPhaseCount ? row.phase_mean[k] : row.step_mean;
      sum += value;
      low = std::min(low, value);
      high = std::max(high, value);
    }
    across[name] = {{"mean_s", rows.empty() ? 0.0 : sum / static_cast<double>(rows.size())},
                    {"min_s", low},
                    {"max_s", high}};
  }
  return {{"per_worker", per_worker}, {"across_workers", across}, {"slowest_worker", slowest_worker(rows)}};
}

std::string workers_table(const std::vector<std::string>& reports) {
  const auto rows = worker_rows(reports);
  const size_t epochs = nlohmann::json::parse(reports.front())["epochs"].size();
  std::string out = fmt::format(
      "Per worker, mean ms per step over {} (comm = exposed; total, wait, transfer beside it)\n",
      steady_epochs_label(epochs));
  out += fmt::format("  {:>4} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>8} {:>9} {:>10}\n", "rank",
                     "load", "forward", "backward", "comm", "update", "other", "step", "comm total", "wait",
                     "transfer", "last in");
  for (const auto& row : rows) {
    out += fmt::format("  {:>4}", row.rank);
    for (double mean : row.phase_mean) out += fmt::format(" {:>8.3f}", 1e3 * mean);
    out += fmt::format(" {:>8.3f} {:>10.3f} {:>8.3f} {:>9.3f} {:>10}\n", 1e3 * row.step_mean, 1e3 * row.comm_total,
                       1e3 * row.wait, 1e3 * row.transfer, row.steps_last_to_arrive);
  }
  out += fmt::format("  slowest worker (longest compute per step): rank {}\n", slowest_worker(rows));
  return out;
}

double operator_clock_reads_per_step(const std::map<std::string, OperatorTime>& operators, int64_t steps) {
  int64_t calls = 0;
  for (const auto& [kind, t] : operators) calls += t.forward_calls + t.backward_calls;
  return steps > 0 ? 2.0 * static_cast<double>(calls) / static_cast<double>(steps) : 0.0;
}

std::string operators_table(const std::map<std::string, OperatorTime>& operators, int64_t steps) {
  if (operators.empty() || steps == 0) return "";
  double total = 0.0;
  for (const auto& [kind, t] : operators) total += t.forward_seconds + t.backward_seconds;
  std::vector<std::pair<std::string, OperatorTime>> rows(operators.begin(), operators.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.forward_seconds + a.second.backward_seconds > b.second.forward_seconds + b.second.backward_seconds;
  });
  std::string out = fmt::format("Per operator, ms per step (forward + backward inside training)\n");
  out += fmt::format("  {:<20} {:>10} {:>11} {:>7}\n", "operator", "forward", "backward", "share");
  for (const auto& [kind, t] : rows) {
    const auto per_step = [&](double seconds) { return 1e3 * seconds / static_cast<double>(steps); };
    out += fmt::format("  {:<20} {:>10.3f} {:>11.3f} {:>6.1f}%\n", kind, per_step(t.forward_seconds),
                       per_step(t.backward_seconds), 100.0 * (t.forward_seconds + t.backward_seconds) / total);
  }
  return out;
}

std::string epochs_table(const std::vector<EpochResult>& epochs) {
  std::string out = fmt::format("  {:>5} {:>10} {:>9} {:>10} {:>9} {:>10} {:>9}\n", "epoch", "train loss",
                                "train acc", "test loss", "test acc", "images/s", "wall s");
  for (const auto& e : epochs) {
    out += fmt::format("  {:>5} {:>10.4f} {:>8.2f}% {:>10.4f} {:>8.2f}% {:>10.0f} {:>9.1f}\n", e.epoch,
                       e.train.loss, 100 * e.train.accuracy, e.test.loss, 100 * e.test.accuracy,
                       e.images_per_second, e.wall_seconds);
  }
  return out;
}

}  // namespace dtbench
