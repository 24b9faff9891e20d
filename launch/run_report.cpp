#include "launch/run_report.h"

#include <fmt/format.h>

namespace dtbench {

namespace {

nlohmann::json stats_json(const PhaseStats& s) {
  return {{"sum_s", s.sum}, {"mean_s", s.mean}, {"median_s", s.median},
          {"p95_s", s.p95}, {"min_s", s.min},   {"max_s", s.max}};
}

nlohmann::json sync_json(const SyncTimes& t) {
  return {{"comm_s", t.comm},         {"update_s", t.update},
          {"wait_s", t.wait},         {"transfer_s", t.transfer},
          {"push_s", t.push},         {"pull_s", t.pull},
          {"bytes_sent", t.bytes_sent}, {"bytes_received", t.bytes_received}};
}

nlohmann::json epoch_json(const EpochResult& e) {
  return {{"epoch", e.epoch},
          {"steps", e.phases.steps},
          {"images", e.images},
          {"train_seconds", e.train_seconds},
          {"images_per_second", e.images_per_second},
          {"wall_seconds", e.wall_seconds},
          {"train_loss", e.train.loss},
          {"train_accuracy", e.train.accuracy},
          {"test_loss", e.test.loss},
          {"test_accuracy", e.test.accuracy},
          {"test_samples", e.test.samples},
          {"phases", phases_json(e.phases)},
          {"comm_split", sync_json(e.sync_total)}};
}

// Phase statistics over several epochs, weighted by their steps (the median and p95 of the
// combined steps are approximated by the step-weighted mean of each epoch's).
EpochPhases combine(const std::vector<EpochResult>& epochs, size_t first) {
  EpochPhases total;
  auto merge = [](PhaseStats& into, const PhaseStats& s, double w, double& weight) {
    into.sum += s.sum;
    into.median = (into.median * weight + s.median * w) / (weight + w);
    into.p95 = (into.p95 * weight + s.p95 * w) / (weight + w);
    into.min = weight == 0 ? s.min : std::min(into.min, s.min);
    into.max = std::max(into.max, s.max);
  };
  double weight = 0.0;
  for (size_t i = first; i < epochs.size(); ++i) {
    const EpochPhases& p = epochs[i].phases;
    if (p.steps == 0) continue;
    const auto w = static_cast<double>(p.steps);
    for (size_t k = 0; k < kPhaseCount; ++k) merge(total.phase[k], p.phase[k], w, weight);
    merge(total.step, p.step, w, weight);
    weight += w;
    total.steps += p.steps;
  }
  if (total.steps > 0) {
    for (auto& s : total.phase) s.mean = s.sum / static_cast<double>(total.steps);
    total.step.mean = total.step.sum / static_cast<double>(total.steps);
  }
  return total;
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
    summary["final_test_accuracy"] = s.epochs.back().test.accuracy;
    summary["final_test_loss"] = s.epochs.back().test.loss;
    int64_t images = 0;
    double seconds = 0.0;
    for (const auto& e : s.epochs) {
      images += e.images;
      seconds += e.train_seconds;
    }
    summary["images"] = images;
    summary["images_per_second"] = seconds > 0 ? static_cast<double>(images) / seconds : 0.0;
    const double mean_step = first.step.mean;
    summary["profiler_overhead_estimate"] =
        mean_step > 0 ? Profiler::kClockReadsPerStep * s.clock_read_seconds / mean_step : 0.0;
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
      {"memory", {{"peak_resident_bytes", peak_resident_bytes()}, {"resident_bytes", resident_bytes()}}},
      {"profiler", {{"clock_read_seconds", s.clock_read_seconds},
                    {"clock_reads_per_step", Profiler::kClockReadsPerStep}}},
  };
  if (!s.error.empty()) report["error"] = s.error;
  return report;
}

std::string breakdown_table(const std::vector<EpochResult>& epochs) {
  std::string out;
  if (epochs.empty()) return "no completed epoch\n";
  append_phase_rows(out, "Per-phase breakdown, epoch 1 (warm-up)", epochs.front().phases);
  if (epochs.size() > 1) {
    append_phase_rows(out, fmt::format("Per-phase breakdown, epochs 2-{}", epochs.size()), combine(epochs, 1));
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
