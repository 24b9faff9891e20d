#include "launch/report/run_span.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/profile/profiler.h"

namespace dtbench {

namespace {

using nlohmann::json;

// Every epoch of every report has the three times and its images.
bool has_epoch_times(const json& report) {
  if (!report.is_object() || !report.contains("epochs") || !report["epochs"].is_array()) return false;
  if (report["epochs"].empty()) return false;
  for (const json& epoch : report["epochs"]) {
    for (const char* key : {"start_unix_s", "steps_end_unix_s", "end_unix_s", "images"}) {
      if (!epoch.contains(key) || !epoch[key].is_number()) return false;
    }
  }
  return true;
}

double time_of(const json& report, size_t epoch, const char* key) { return report["epochs"][epoch][key].get<double>(); }

}  // namespace

std::string steady_epochs_label(size_t epochs) {
  if (epochs <= 1) return "epoch 1 (the only one: nothing left out as warm-up)";
  if (epochs == 2) return "epoch 2 (epoch 1 left out as warm-up)";
  return fmt::format("epochs 2-{} (epoch 1 left out as warm-up)", epochs);
}

std::optional<RunSpan> run_span(const std::vector<json>& reports) {
  if (reports.empty()) return std::nullopt;
  size_t epochs = std::numeric_limits<size_t>::max();
  for (const json& report : reports) {
    if (!has_epoch_times(report)) return std::nullopt;
    epochs = std::min(epochs, report["epochs"].size());  // every worker's, where a failed one stopped early
  }
  RunSpan span;
  span.workers = static_cast<int>(reports.size());
  span.start_unix_seconds = std::numeric_limits<double>::infinity();
  span.end_unix_seconds = -std::numeric_limits<double>::infinity();
  const size_t first_steady = first_steady_epoch(epochs);
  for (size_t e = 0; e < epochs; ++e) {
    double epoch_start = std::numeric_limits<double>::infinity();
    double steps_end = -std::numeric_limits<double>::infinity();
    double epoch_end = -std::numeric_limits<double>::infinity();
    for (const json& report : reports) {
      epoch_end = std::max(epoch_end, time_of(report, e, "end_unix_s"));
      const auto images = report["epochs"][e]["images"].get<int64_t>();
      epoch_start = std::min(epoch_start, time_of(report, e, "start_unix_s"));
      steps_end = std::max(steps_end, time_of(report, e, "steps_end_unix_s"));
      span.end_unix_seconds = std::max(span.end_unix_seconds, time_of(report, e, "end_unix_s"));
      span.images += images;
      if (e >= first_steady) span.steady_images += images;
    }
    span.epoch_end_unix_seconds.push_back(epoch_end);
    span.start_unix_seconds = std::min(span.start_unix_seconds, epoch_start);
    if (e >= first_steady) span.steady_training_seconds += std::max(0.0, steps_end - epoch_start);
  }
  span.seconds = span.end_unix_seconds - span.start_unix_seconds;
  span.images_per_second = span.steady_training_seconds > 0
                               ? static_cast<double>(span.steady_images) / span.steady_training_seconds
                               : 0.0;
  span.steady_epochs = steady_epochs_label(epochs);
  return span;
}

std::optional<RunSpan> run_span_of(const json& own, const std::vector<std::string>& gathered) {
  std::vector<json> reports;
  for (const auto& text : gathered) reports.push_back(json::parse(text));
  if (reports.empty()) reports.push_back(own);
  return run_span(reports);
}

std::string run_span_line(const RunSpan& s) {
  return fmt::format("Run: {} worker(s), {} images in {:.3f} s (first worker's start to last worker's end); "
                     "{:.0f} images/s all workers over {}\n",
                     s.workers, s.images, s.seconds, s.images_per_second, s.steady_epochs);
}

double RunSpan::epoch_seconds() const {
  const auto& ends = epoch_end_unix_seconds;
  if (ends.empty()) return 0.0;
  if (ends.size() == 1) return seconds;
  return (ends.back() - ends.front()) / static_cast<double>(ends.size() - 1);
}

json run_span_json(const RunSpan& s) {
  return {{"workers", s.workers},
          {"start_unix_s", s.start_unix_seconds},
          {"end_unix_s", s.end_unix_seconds},
          {"seconds", s.seconds},
          {"images", s.images},
          {"steady_images", s.steady_images},
          {"steady_training_seconds", s.steady_training_seconds},
          {"images_per_second", s.images_per_second},
          {"steady_epochs", s.steady_epochs},
          {"epoch_end_unix_s", s.epoch_end_unix_seconds},
          {"epoch_seconds", s.epoch_seconds()},
          {"rule", "seconds: first worker's start to last worker's end; images_per_second: all workers' "
                   "images in the steady epochs over the sum of those epochs' spans from the first "
                   "worker's start to the last worker's last step"}};
}

std::optional<RunSpan> read_run_span(const json& report) {
  if (!report.is_object() || !report.contains("run") || !report["run"].is_object()) return std::nullopt;
  const json& r = report["run"];
  RunSpan s;
  s.workers = r.value("workers", 0);
  s.start_unix_seconds = r.value("start_unix_s", 0.0);
  s.end_unix_seconds = r.value("end_unix_s", 0.0);
  s.seconds = r.value("seconds", 0.0);
  s.images = r.value("images", int64_t{0});
  s.steady_images = r.value("steady_images", int64_t{0});
  s.steady_training_seconds = r.value("steady_training_seconds", 0.0);
  s.images_per_second = r.value("images_per_second", 0.0);
  s.steady_epochs = r.value("steady_epochs", std::string());
  s.epoch_end_unix_seconds = r.value("epoch_end_unix_s", std::vector<double>());
  return s;
}

}  // namespace dtbench
