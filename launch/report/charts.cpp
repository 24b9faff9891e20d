#include "launch/report/charts.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "comm/transport_catalogue.h"
#include "core/profile/profiler.h"
#include "launch/report/svg.h"
#include "launch/report/tables.h"

namespace dtbench {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string percent_tick(double value) { return fmt::format("{:g}%", value); }
std::string mib_tick(double value) { return fmt::format("{:g} MiB", value); }

// A series of `values` (one per second of `seconds`), scaled by `scale`.
LineSeries over_time(std::string label, size_t colour, const std::vector<double>& seconds,
                     const std::vector<double>& values, double scale = 1.0) {
  LineSeries series{.label = std::move(label), .colour = colour};
  for (size_t i = 0; i < seconds.size() && i < values.size(); ++i) {
    series.points.emplace_back(seconds[i], values[i] * scale);
  }
  return series;
}

// Per epoch, for every run, the test value (solid line) and the training value (dashed) of one
// quantity, times `scale`.
LineChart per_epoch(const std::vector<RunRecord>& runs, double EpochRecord::*test, double EpochRecord::*train,
                    double scale) {
  LineChart chart{.x_title = "epoch", .integer_x = true, .width = kHalfChart};
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::string name = runs.size() == 1 ? "" : runs[r].name + " ";
    const size_t colour = transport_colour(runs[r].transport);
    LineSeries test_series{.label = name + "test", .colour = colour};
    LineSeries train_series{.label = name + "train", .colour = colour, .dashed = true};
    for (const auto& e : runs[r].epochs) {
      test_series.points.emplace_back(e.epoch, e.*test * scale);
      train_series.points.emplace_back(e.epoch, e.*train * scale);
    }
    chart.series.push_back(std::move(test_series));
    chart.series.push_back(std::move(train_series));
  }
  return chart;
}

}  // namespace

size_t transport_colour(const std::string& transport) {
  // Another engine's transport (ddp), or one this build does not know, shares nccl's colour: the first after the
  // ones the reports have always drawn.
  const TransportRow* row = find_transport_row(transport);
  return row != nullptr ? row->chart_colour : transport_row(kNcclTransport).chart_colour;
}

std::string phases_chart(const std::vector<RunRecord>& runs) {
  std::vector<PhaseBar> bars;
  if (runs.size() == 1) {
    const RunRecord& run = runs.front();
    if (!run.epochs.empty()) bars.push_back({"epoch 1 (warm-up)", mean_phases({run.epochs.front()}, 0)});
    if (run.epochs.size() > 1) bars.push_back({later_epochs_label(run.epochs.size()), mean_phases(run.epochs, 1)});
    bars.push_back({"all epochs", mean_phases(run.epochs, 0)});
    return phase_bars_svg("Phases per step, " + run.name, bars);
  }
  for (const auto& run : runs) {
    bars.push_back({run.name, mean_phases(run.epochs, first_steady_epoch(run.epochs.size()))});
  }
  return phase_bars_svg("Phases per step, steady epochs (epoch 1 left out where there are more)", bars);
}

std::vector<std::string> worker_phase_charts(const std::vector<RunRecord>& runs) {
  // One scale for every run's chart: side by side, a longer bar is a slower worker.
  double longest_ms = 0;
  for (const auto& run : runs) {
    for (const auto& w : run.workers) longest_ms = std::max(longest_ms, 1e3 * w.mean_s[kStepIndex]);
  }
  std::vector<std::string> charts;
  for (const auto& run : runs) {
    if (run.workers.empty()) continue;
    std::vector<PhaseBar> bars;
    for (const auto& w : run.workers) {
      const bool slowest = w.rank == run.slowest_worker;
      bars.push_back({fmt::format("rank {}{}", w.rank, slowest ? " (slowest)" : ""), w.mean_s});
    }
    charts.push_back(phase_bars_svg(fmt::format("Per worker, {} ({}), steady epochs", run.name, run.transport), bars,
                                    runs.size() == 1 ? kWideChart : kHalfChart, longest_ms));
  }
  return charts;
}

std::string time_chart(const std::vector<RunRecord>& runs, bool log_scale) {
  std::vector<ValueBar> bars;
  if (runs.size() == 1) {
    for (const auto& e : runs.front().epochs) {
      bars.push_back({e.epoch == 1 ? std::string("epoch 1 (warm-up)") : fmt::format("epoch {}", e.epoch),
                      e.train_seconds, 0});
    }
    return value_bars_svg("Training time per epoch", bars, "s", log_scale);
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    bars.push_back({fmt::format("{} ({})", runs[r].name, runs[r].transport), runs[r].wall_seconds,
                    transport_colour(runs[r].transport)});
  }
  return value_bars_svg("Total wall time per run", bars, "s", log_scale);
}

std::string accuracy_chart(const std::vector<RunRecord>& runs) {
  LineChart chart = per_epoch(runs, &EpochRecord::test_accuracy, &EpochRecord::train_accuracy, 100.0);
  chart.title = "Accuracy per epoch";
  chart.y_title = "accuracy";
  chart.y_text = percent_tick;
  chart.y_max = 100.0;
  chart.y_from_zero = false;  // accuracies a point apart matter: the axis starts near the lowest
  return line_chart_svg(chart);
}

std::string loss_chart(const std::vector<RunRecord>& runs) {
  LineChart chart = per_epoch(runs, &EpochRecord::test_loss, &EpochRecord::train_loss, 1.0);
  chart.title = "Loss per epoch";
  chart.y_title = "cross-entropy loss (log)";
  chart.log_y = true;  // a first epoch's loss does not flatten the later ones' differences
  return line_chart_svg(chart);
}

std::vector<std::string> resource_charts(const RunRecord& run, const std::string& title_suffix) {
  LineChart cpu{.title = "Process CPU" + title_suffix, .x_title = "seconds since start",
                .y_title = "% of one core", .y_text = percent_tick, .y_max = 100.0, .width = kHalfChart};
  LineChart memory{.title = "Resident memory" + title_suffix, .x_title = "seconds since start",
                   .y_title = "RSS", .y_text = mib_tick, .width = kHalfChart};
  LineChart gpu_use{.title = "GPU utilisation" + title_suffix, .x_title = "seconds since start",
                    .y_title = "% of time busy", .y_text = percent_tick, .y_max = 100.0, .width = kHalfChart};
  LineChart gpu_memory{.title = "GPU memory" + title_suffix, .x_title = "seconds since start",
                       .y_title = "used", .y_text = mib_tick, .width = kHalfChart};
  for (size_t w = 0; w < run.resources.size(); ++w) {
    const ResourceRecord& r = run.resources[w];
    if (r.seconds.size() < kFewestResourceSamples) continue;  // a point or two is no curve
    const std::string worker = fmt::format("rank {}", r.rank);
    cpu.series.push_back(over_time(worker, w, r.seconds, r.cpu_percent));
    memory.series.push_back(over_time(worker, w, r.seconds, r.rss_bytes, 1.0 / kMiB));
    for (size_t d = 0; d < r.gpus.size(); ++d) {
      const std::string device = r.gpus.size() == 1 ? worker : fmt::format("{} GPU {}", worker, d);
      gpu_use.series.push_back(over_time(device, w, r.seconds, r.gpus[d].utilisation_percent));
      gpu_memory.series.push_back(over_time(device, w, r.seconds, r.gpus[d].memory_used_bytes, 1.0 / kMiB));
    }
  }
  if (cpu.series.empty()) return {};
  std::vector<std::string> charts = {line_chart_svg(cpu), line_chart_svg(memory)};
  if (!gpu_use.series.empty()) {
    charts.push_back(line_chart_svg(gpu_use));
    charts.push_back(line_chart_svg(gpu_memory));
  }
  return charts;
}

}  // namespace dtbench
