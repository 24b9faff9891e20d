#include "launch/report/sweep_section.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "core/util/error.h"
#include "launch/report/charts.h"
#include "launch/report/format.h"
#include "launch/report/svg.h"

namespace dtbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string text_of(const json& value) { return value.is_string() ? value.get<std::string>() : value.dump(); }

// "1.234" s, "567" images/s, "81.2%": a results.json spread as median [min - max].
std::string spread_cell(const json& stats, const std::string& metric) {
  if (!stats.contains(metric) || !stats[metric].is_object()) return "-";
  const json& s = stats[metric];
  auto value = [&metric](const json& v) -> std::string {
    if (!v.is_number()) return v.is_null() ? "-" : text_of(v);
    const double x = v.get<double>();
    if (metric == "test_accuracy") return percent_text(x);
    if (metric == "images_per_s") return fmt::format("{:.0f}", x);
    return seconds_text(x);
  };
  if (s.value("n", 0) < 2) return value(s.value("median", json()));
  return fmt::format("{} [{} – {}]", value(s.value("median", json())), value(s.value("min", json())),
                     value(s.value("max", json())));
}

SweepConfigurationView configuration_view(const json& c, const fs::path& dir) {
  SweepConfigurationView view;
  view.id = c.value("id", std::string());
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<std::string> workload, network;
  const json axis_values = c.value("values", json::object());  // kept: items() refers into it
  for (const auto& [axis, value] : axis_values.items()) {
    values.emplace_back(axis, text_of(value));
    if (is_workload_axis(axis)) workload.push_back(text_of(value));
    if (is_network_axis(axis)) network.push_back(text_of(value));
  }
  view.label = short_configuration_label(values, c.value("transport", std::string()), c.value("workers", int64_t{1}),
                                         c.value("engine", std::string("dtbench")));
  view.workload = fmt::format("{}", fmt::join(workload, " "));
  if (!network.empty()) view.workload += fmt::format("{}{}", view.workload.empty() ? "" : ", ", fmt::join(network, " "));
  view.stats = c.value("stats", json::object());
  view.measured = c.value("measured", int64_t{0});
  view.complete = c.value("complete", int64_t{0});
  const json runs = c.value("runs", json::array());
  for (const json& run : runs) {
    if (run.value("warmup", false) || run.value("status", std::string()) != "complete") continue;
    // Where the sweep put it: <sweep>/<configuration>/<run>, wherever the sweep was started from.
    const fs::path recorded = run.value("dir", std::string());
    view.measured_runs.push_back(dir / view.id / recorded.filename());
  }
  return view;
}

// The comparison of `id` with the baseline, if results.json has one.
const json* comparison_of(const SweepView& sweep, const std::string& id) {
  for (const json& c : sweep.comparisons) {
    if (c.value("configuration", std::string()) == id) return &c;
  }
  return nullptr;
}

std::vector<std::string> workloads(const SweepView& sweep) {
  std::vector<std::string> names;
  for (const auto& c : sweep.configurations) {
    if (std::find(names.begin(), names.end(), c.workload) == names.end()) names.push_back(c.workload);
  }
  return names;
}

}  // namespace

bool is_workload_axis(const std::string& axis) {
  return axis == "workload" || axis == "model" || axis.starts_with("dataset.") || axis.starts_with("data.");
}

bool is_network_axis(const std::string& axis) { return axis == "network" || axis == "link"; }

std::string short_configuration_label(const std::vector<std::pair<std::string, std::string>>& values,
                                      const std::string& transport, int64_t workers, const std::string& engine) {
  // Another engine's runs say so, as a run's own report does ("pytorch ddp x3").
  const std::string trainer = engine == "dtbench" || engine.empty() ? transport : engine + " " + transport;
  std::string label = fmt::format("{} x{}", trainer, workers);
  for (const auto& [axis, value] : values) {
    // The label's own words as another axis's value ("configuration: ring", "pytorch-ddp") say
    // them twice.
    if (axis == "transport" || axis == "workers" || is_workload_axis(axis) || value == transport ||
        value == engine + "-" + transport) {
      continue;
    }
    // A bare number says nothing without its axis: "@delay_ms=20"; a word says itself: "@1gbit".
    const bool number = !value.empty() && value.find_first_not_of("0123456789.-") == std::string::npos;
    label += number ? fmt::format(" @{}={}", axis.substr(axis.rfind('.') + 1), value) : " @" + value;
  }
  return label;
}

SweepView sweep_view(const json& results, const fs::path& dir) {
  SweepView sweep;
  sweep.dir = dir;
  sweep.name = results.value("sweep", std::string());
  sweep.repetitions = results.value("repetitions", int64_t{0});
  for (const json& c : results.value("configurations", json::array())) {
    if (c.value("missing", json()).is_null()) sweep.configurations.push_back(configuration_view(c, dir));
  }
  sweep.comparisons = results.value("comparisons", json::array());
  if (!sweep.comparisons.empty()) {
    const json& first = sweep.comparisons.front();
    sweep.metric = first.value("metric", std::string());
    sweep.test = first.value("test", std::string());
    for (const auto& c : sweep.configurations) {
      if (c.id == first.value("baseline", std::string())) sweep.baseline_value = c.label;
    }
  }
  return sweep;
}

std::optional<SweepView> find_sweep(const std::vector<fs::path>& run_dirs) {
  std::optional<fs::path> sweep_dir;
  for (const auto& run_dir : run_dirs) {
    const fs::path dir = fs::absolute(run_dir).lexically_normal();
    const fs::path run = dir.has_filename() ? dir : dir.parent_path();
    const fs::path candidate = run.parent_path().parent_path();
    if (!fs::exists(run / "run.json") || !fs::exists(candidate / "results.json")) return std::nullopt;
    if (sweep_dir && *sweep_dir != candidate) return std::nullopt;
    sweep_dir = candidate;
  }
  if (!sweep_dir) return std::nullopt;
  std::ifstream in(*sweep_dir / "results.json");
  try {
    return sweep_view(json::parse(in), *sweep_dir);
  } catch (const json::exception& error) {
    fail_input("{}: not a sweep's results: {}", (*sweep_dir / "results.json").string(), error.what());
  }
}

std::vector<ReportTable> sweep_result_tables(const SweepView& sweep) {
  std::vector<ReportTable> tables;
  for (const auto& workload : workloads(sweep)) {
    ReportTable table = titled_table(
        fmt::format("Sweep {}{}: median [min – max] over the measured repetitions", sweep.name,
                    workload.empty() ? "" : ", " + workload),
        {"configuration", "runs", "run s", "images/s", "test accuracy", "vs baseline", "p", "significant"});
    for (const auto& c : sweep.configurations) {
      if (c.workload != workload) continue;
      std::vector<std::string> row = {c.label, fmt::format("{} of {}", c.complete, c.measured),
                                      spread_cell(c.stats, "run_s"), spread_cell(c.stats, "images_per_s"),
                                      spread_cell(c.stats, "test_accuracy")};
      if (const json* comparison = comparison_of(sweep, c.id)) {
        row.push_back(fmt::format("{:.2f}x", comparison->value("ratio", 0.0)));
        row.push_back(fmt::format("{:.3g}", comparison->value("p_value", 1.0)));
        row.push_back(comparison->value("significant", false) ? "yes" : "no");
      } else {
        row.insert(row.end(), {"baseline", "", ""});
      }
      table.rows.push_back(row);
    }
    if (!sweep.metric.empty()) {
      table.note = fmt::format("vs baseline: the median {} over the baseline's ({}), two-sided {} test; p < 0.05 "
                               "is significant.", sweep.metric, sweep.baseline_value, sweep.test);
    }
    tables.push_back(table);
  }
  return tables;
}

std::vector<std::string> sweep_charts(const SweepView& sweep) {
  std::vector<std::string> charts;
  for (const auto& workload : workloads(sweep)) {
    std::vector<ValueBar> bars;
    for (const auto& c : sweep.configurations) {
      if (c.workload != workload || !c.stats.contains("images_per_s")) continue;
      const json median = c.stats["images_per_s"].value("median", json());
      const std::string transport = c.label.substr(0, c.label.find(' '));
      if (median.is_number()) bars.push_back({c.label, median.get<double>(), transport_colour(transport)});
    }
    if (bars.empty()) continue;
    charts.push_back(value_bars_svg(fmt::format("Median images/s{}", workload.empty() ? "" : ", " + workload), bars,
                                    "images/s", false, kHalfChart));
  }
  return charts;
}

}  // namespace dtbench
