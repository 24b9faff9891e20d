#include "launch/sweep/results.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/report/csv.h"
#include "launch/report/run_record.h"
#include "launch/report/run_span.h"

namespace dtbench {

namespace fs = std::filesystem;

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
const std::vector<std::string>& kMetrics = sweep_metric_names();
const std::vector<std::string> kPhases = {"step", "load", "forward", "backward", "comm", "update", "other"};
// Metrics where a capped run is known to be worse than any finished one.
bool is_time(const std::string& metric) { return metric == "run_s" || metric == "process_s" || metric == "epoch_s"; }

nlohmann::json read_report(const fs::path& path) {
  const std::optional<std::string> text = read_file(path);
  if (!text) throw IoError(fmt::format("{}: cannot open it", path.string()));
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& error) {
    throw IoError(fmt::format("{}: not valid JSON: {}", path.string(), error.what()));
  }
}

std::string format_value(double value, const std::string& metric, double cap_s) {
  if (std::isnan(value)) return "-";
  if (std::isinf(value)) return fmt::format("> {:g} s cap", cap_s);
  if (metric == "test_accuracy") return fmt::format("{:.2f}%", 100 * value);
  if (metric == "images_per_s") return fmt::format("{:.0f}", value);
  return fmt::format("{:.3f}", value);
}

std::string spread_cell(const Spread& s, const std::string& metric, double cap_s) {
  if (s.count == 0) return "-";
  if (s.count == 1) return format_value(s.median, metric, cap_s);
  return fmt::format("{} [{} – {}]", format_value(s.median, metric, cap_s), format_value(s.min, metric, cap_s),
                     format_value(s.max, metric, cap_s));
}

std::string status_cell(const ConfigurationResult& r) {
  if (!r.configuration.missing.empty()) return "missing: " + r.configuration.missing;
  std::string status = fmt::format("{} of {}", r.complete, r.measured);
  if (r.capped > 0) status += fmt::format(", {} capped", r.capped);
  if (r.failed > 0) status += fmt::format(", {} failed", r.failed);
  return status;
}

nlohmann::json spread_json(const Spread& s) {
  auto number = [](double v) -> nlohmann::json {
    if (std::isnan(v)) return nullptr;
    if (std::isinf(v)) return "> cap";
    return v;
  };
  return {{"n", s.count}, {"median", number(s.median)}, {"min", number(s.min)}, {"max", number(s.max)}};
}

// The twin of `c` with `value` on `axis`, all other axis values equal.
const ConfigurationResult* twin(const std::vector<ConfigurationResult>& all, const SweepConfiguration& c,
                                const std::string& axis, const std::string& value) {
  for (const auto& other : all) {
    bool same = true;
    for (size_t i = 0; i < c.values.size() && same; ++i) {
      const auto& [key, own] = c.values[i];
      same = other.configuration.values[i].second == (key == axis ? value : own);
    }
    if (same) return &other;
  }
  return nullptr;
}

std::vector<double> metric_values(const ConfigurationResult& r, const std::string& metric) {
  std::vector<double> values;
  for (size_t i = 0; i < r.runs.size(); ++i) {
    if (r.runs[i].warmup) continue;
    if (const auto it = r.metrics[i].find(metric); it != r.metrics[i].end()) values.push_back(it->second);
  }
  return values;
}

// The metric of the measured runs with the same repetition number on both sides, as pairs.
std::pair<std::vector<double>, std::vector<double>> paired_values(const ConfigurationResult& a,
                                                                  const ConfigurationResult& b,
                                                                  const std::string& metric) {
  std::map<int64_t, double> of_b;
  for (size_t i = 0; i < b.runs.size(); ++i) {
    if (b.runs[i].warmup) continue;
    if (const auto it = b.metrics[i].find(metric); it != b.metrics[i].end()) of_b[b.runs[i].repetition] = it->second;
  }
  std::pair<std::vector<double>, std::vector<double>> pairs;
  for (size_t i = 0; i < a.runs.size(); ++i) {
    if (a.runs[i].warmup) continue;
    const auto it = a.metrics[i].find(metric);
    const auto twin = of_b.find(a.runs[i].repetition);
    if (it == a.metrics[i].end() || twin == of_b.end()) continue;
    pairs.first.push_back(it->second);
    pairs.second.push_back(twin->second);
  }
  return pairs;
}

}  // namespace

RunMetrics run_metrics(const SweepRun& run) {
  RunMetrics m;
  if (run.status == "capped") {
    for (const auto& metric : kMetrics) {
      if (is_time(metric)) m[metric] = kInfinity;
    }
    return m;
  }
  if (run.status != "complete") return m;
  const fs::path file = run.dir / "report.json";
  const nlohmann::json report = read_report(file);
  try {
    report.at("world");  // required, as is summary.images_per_second: run_images_per_second is lenient
    m["process_s"] = run.process_seconds;
    report.at("wall_seconds");  // required; run_seconds prefers the run's span where recorded
    m["run_s"] = run_seconds(report);
    const auto& epochs = report.at("epochs");
    // Epoch wall times are cumulative: the first epoch's is its own, the later ones' mean is the
    // span from the first epoch's end to the last's over their number.
    // The run's epochs where recorded (the last worker's end of each: run_span.h), else rank 0's.
    const std::optional<RunSpan> span = read_run_span(report);
    if (span && !span->epoch_end_unix_seconds.empty()) {
      m["epoch_s"] = span->epoch_seconds();
    } else if (!epochs.empty()) {
      const double first = epochs.front().at("wall_seconds").get<double>();
      const double last = epochs.back().at("wall_seconds").get<double>();
      m["epoch_s"] = epochs.size() > 1 ? (last - first) / static_cast<double>(epochs.size() - 1) : first;
    }
    const auto& summary = report.at("summary");
    summary.at("images_per_second");
    m["images_per_s"] = run_images_per_second(report);
    m["test_accuracy"] = summary.at("final_test_accuracy").get<double>();
    // The warm-up rule: the steady epochs' phases; reports written before it have all epochs'.
    const auto& phases = summary.contains("steady_phases") ? summary["steady_phases"] : summary.at("all_epochs_phases");
    for (const auto& phase : kPhases) m[phase + "_ms"] = 1e3 * phases.at(phase).at("mean_s").get<double>();
  } catch (const nlohmann::json::exception& error) {
    throw IoError(fmt::format("{}: not a complete run's report: {}", file.string(), error.what()));
  }
  return m;
}

SweepResults summarize_sweep(const SweepBlueprint& sweep, std::vector<ConfigurationResult> configurations) {
  SweepResults results;
  for (ConfigurationResult& r : configurations) {
    r.metrics.clear();
    for (SweepRun& run : r.runs) {
      try {
        r.metrics.push_back(run_metrics(run));
      } catch (const IoError& error) {
        run.status = "failed";
        run.error = error.what();
        r.metrics.emplace_back();
      }
    }
    r.measured = r.complete = r.capped = r.failed = 0;
    for (const auto& run : r.runs) {
      if (run.warmup) continue;
      ++r.measured;
      r.complete += run.status == "complete";
      r.capped += run.status == "capped";
      r.failed += run.status != "complete" && run.status != "capped";
    }
    for (const auto& metric : kMetrics) r.stats[metric] = spread_of(metric_values(r, metric));
    results.configurations.push_back(std::move(r));
  }
  if (!sweep.compare) return results;
  const SweepComparison& compare = *sweep.compare;
  for (const auto& r : results.configurations) {
    const std::string* value = r.configuration.value_of(compare.axis);
    if (value == nullptr || *value == compare.baseline) continue;
    const ConfigurationResult* base = twin(results.configurations, r.configuration, compare.axis, compare.baseline);
    if (base == nullptr) continue;
    const bool paired = compare.test == "wilcoxon";
    const auto [ours, theirs] = paired ? paired_values(r, *base, compare.metric)
                                       : std::pair{metric_values(r, compare.metric), metric_values(*base, compare.metric)};
    if (ours.empty() || theirs.empty()) {
      results.skipped_comparisons.push_back(fmt::format("{}: no {} {} on {} side", r.configuration.id,
                                                        paired ? "paired" : "measured", compare.metric,
                                                        ours.empty() ? "its" : "the baseline's"));
      continue;
    }
    ComparisonResult c;
    c.configuration = r.configuration.id;
    c.baseline = base->configuration.id;
    c.metric = compare.metric;
    c.ratio = spread_of(ours).median / spread_of(theirs).median;
    c.test = paired ? wilcoxon_signed_rank(ours, theirs) : mann_whitney_u(ours, theirs);
    results.comparisons.push_back(c);
  }
  return results;
}

std::vector<ReportTable> sweep_tables(const SweepBlueprint& sweep, const SweepResults& results) {
  ReportTable summary = titled_table(
      fmt::format("Sweep {}: median [min – max] over the measured repetitions", sweep.name),
      {"configuration", "runs", "run s", "epoch s", "images/s", "step ms", "comm ms", "test accuracy"});
  for (const auto& r : results.configurations) {
    std::vector<std::string> row = {r.configuration.id, status_cell(r)};
    for (const char* metric : {"run_s", "epoch_s", "images_per_s", "step_ms", "comm_ms", "test_accuracy"}) {
      row.push_back(r.configuration.missing.empty() ? spread_cell(r.stats.at(metric), metric, sweep.cap_s) : "missing");
    }
    summary.rows.push_back(row);
  }
  summary.note = fmt::format("{} warm-up run(s) per configuration left out; within a run, epoch 1 is left out of "
                             "epoch s, images/s and the ms per step when the run has more epochs. run s: first "
                             "worker's start to last worker's end; images/s: all workers' images over the run's "
                             "training span. A run stopped at the {:g} s cap counts as slower than any finished run.",
                             sweep.warmup, sweep.cap_s);
  std::vector<ReportTable> tables = {summary};

  ReportTable phases = titled_table("Per-step phases (ms, median over repetitions, rank 0, steady epochs: epoch 1 "
                                    "left out where a run has more)",
                                    {"configuration", "load", "forward", "backward", "comm", "update", "other"});
  for (const auto& r : results.configurations) {
    if (!r.configuration.missing.empty()) continue;
    std::vector<std::string> row = {r.configuration.id};
    for (const char* phase : {"load_ms", "forward_ms", "backward_ms", "comm_ms", "update_ms", "other_ms"}) {
      row.push_back(format_value(r.stats.at(phase).median, phase, sweep.cap_s));
    }
    phases.rows.push_back(row);
  }
  tables.push_back(phases);

  if (sweep.compare) {
    ReportTable comparisons = titled_table(
        fmt::format("Against {}={} ({}, two-sided {})", sweep.compare->axis, sweep.compare->baseline,
                    sweep.compare->metric, sweep.compare->test),
        {"configuration", "baseline", "median ratio", "statistic", "p", "p < 0.05"});
    for (const auto& c : results.comparisons) {
      comparisons.rows.push_back({c.configuration, c.baseline, fmt::format("{:.3f}", c.ratio),
                                  fmt::format("{:g}", c.test.statistic),
                                  fmt::format("{:.4f}{}", c.test.p_value, c.test.exact ? "" : " (normal approx.)"),
                                  c.test.p_value < 0.05 ? "yes" : "no"});
    }
    comparisons.note = "Ratios above 1: the configuration's metric is larger than the baseline's.";
    if (sweep.compare->test == "wilcoxon") comparisons.note += " Runs are paired by repetition number.";
    for (const auto& skipped : results.skipped_comparisons) comparisons.note += " Not compared: " + skipped + ".";
    tables.push_back(comparisons);
  }
  return tables;
}

std::vector<std::string> sweep_csv_columns(const SweepBlueprint& sweep) {
  std::vector<std::string> columns = {"configuration"};
  for (const auto& axis : sweep.axes) columns.push_back(axis.key);
  // The runner's own settings, unless they are axes already.
  for (const char* setting : {"workers", "servers", "transport"}) {
    if (std::none_of(sweep.axes.begin(), sweep.axes.end(), [&](const SweepAxis& a) { return a.key == setting; })) {
      columns.push_back(setting);
    }
  }
  columns.insert(columns.end(), {"repetition", "warmup", "status", "error"});
  columns.insert(columns.end(), kMetrics.begin(), kMetrics.end());
  return columns;
}

namespace {

// The cells every row of a configuration starts with: its id, its axis values, and the settings
// that are not axes.
std::vector<std::string> csv_prefix(const SweepConfiguration& c) {
  std::vector<std::string> cells = {csv_field(c.id)};
  for (const auto& [key, value] : c.values) cells.push_back(csv_field(value));
  const std::vector<std::pair<std::string, std::string>> settings = {
      {"workers", std::to_string(c.workers)}, {"servers", std::to_string(c.servers)}, {"transport", c.transport}};
  for (const auto& [setting, value] : settings) {
    if (c.value_of(setting) == nullptr) cells.push_back(value);
  }
  return cells;
}

// results.csv: one row per run; a missing configuration gets one row saying so.
std::string results_csv(const SweepBlueprint& sweep, const SweepResults& results) {
  std::string csv = fmt::format("{}\n", fmt::join(sweep_csv_columns(sweep), ","));
  for (const auto& r : results.configurations) {
    const auto& c = r.configuration;
    if (!c.missing.empty()) {
      auto cells = csv_prefix(c);
      cells.insert(cells.end(), {"", "", "missing", csv_field(c.missing)});
      cells.resize(cells.size() + kMetrics.size());
      csv += fmt::format("{}\n", fmt::join(cells, ","));
      continue;
    }
    for (const auto& run : r.runs) {
      auto cells = csv_prefix(c);
      cells.insert(cells.end(), {std::to_string(run.repetition), run.warmup ? "true" : "false", run.status,
                                 csv_field(run.error)});
      const RunMetrics& m = r.metrics[static_cast<size_t>(&run - r.runs.data())];
      for (const auto& metric : kMetrics) {
        const auto it = m.find(metric);
        cells.push_back(it == m.end() ? "" : std::isinf(it->second) ? "inf" : fmt::format("{:.9g}", it->second));
      }
      csv += fmt::format("{}\n", fmt::join(cells, ","));
    }
  }
  return csv;
}

nlohmann::json configuration_json(const ConfigurationResult& r) {
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [key, value] : r.configuration.values) values[key] = value;
  nlohmann::json stats = nlohmann::json::object();
  for (const auto& [metric, spread] : r.stats) stats[metric] = spread_json(spread);
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : r.runs) {
    nlohmann::json entry = sweep_run_json(run);
    entry["dir"] = run.dir.string();
    runs.push_back(entry);
  }
  return {{"id", r.configuration.id}, {"values", values},
          {"workers", r.configuration.workers}, {"servers", r.configuration.servers},
          {"transport", r.configuration.transport}, {"engine", r.configuration.engine},
          {"missing", r.configuration.missing.empty() ? nlohmann::json(nullptr)
                                                       : nlohmann::json(r.configuration.missing)},
          {"measured", r.measured}, {"complete", r.complete}, {"capped", r.capped},
          {"failed", r.failed}, {"stats", stats}, {"runs", runs}};
}

nlohmann::json results_json(const SweepBlueprint& sweep, const SweepResults& results) {
  nlohmann::json json = {{"sweep", sweep.name}, {"source", sweep.source.string()}, {"repetitions", sweep.repetitions},
                         {"warmup", sweep.warmup}, {"cap_s", sweep.cap_s}};
  for (const auto& r : results.configurations) json["configurations"].push_back(configuration_json(r));
  json["comparisons"] = nlohmann::json::array();
  for (const auto& c : results.comparisons) {
    json["comparisons"].push_back({{"configuration", c.configuration}, {"baseline", c.baseline}, {"metric", c.metric},
                                   {"ratio", c.ratio}, {"test", c.test.name}, {"statistic", c.test.statistic},
                                   {"p_value", c.test.p_value}, {"exact", c.test.exact},
                                   {"significant", c.test.p_value < 0.05}});
  }
  return json;
}

}  // namespace

void write_sweep_results(const SweepBlueprint& sweep, const SweepResults& results, const fs::path& dir) {
  write_file_atomically(dir / "results.csv", results_csv(sweep, results));
  write_file_atomically(dir / "results.json", results_json(sweep, results).dump(2) + "\n");
  std::string markdown = fmt::format("# Sweep {}\n\nFrom `{}`.\n\n", sweep.name, sweep.source.string());
  for (const auto& table : sweep_tables(sweep, results)) markdown += render_markdown(table);
  write_file_atomically(dir / "results.md", markdown);
}

}  // namespace dtbench
