// dtbench report: the tables and charts of one run, or a comparison of several, from their
// report.json files — printed, and written as report.md, phases.csv and report.html; and the runs'
// timelines merged into trace.json.
#include "launch/report/report.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/report/csv.h"
#include "launch/report/html.h"
#include "launch/report/run_record.h"
#include "launch/report/tables.h"
#include "launch/report/server_stats.h"
#include "launch/report/sweep_section.h"
#include "launch/report/trace_merge.h"
#include "launch/report/verdict_section.h"

namespace dtbench {

namespace {

namespace fs = std::filesystem;

std::string markdown(const std::vector<RunRecord>& runs, const ReportSummary& summary,
                     const std::vector<ReportTable>& sweep_tables, const std::vector<ReportTable>& tables) {
  std::string out = "# dtbench report\n\n" + summary_markdown(summary);
  for (const auto& table : sweep_tables) out += render_markdown(table);
  out += "## Runs\n\n";
  for (const auto& run : runs) {
    out += fmt::format("- **{}** — transport {}, {} worker(s), {} epoch(s){}\n", run.name, run.transport, run.world,
                       run.epochs.size(), run.complete() ? "" : " — " + incomplete_note(run));
  }
  out += "\n";
  for (const auto& table : tables) out += render_markdown(table);
  return out;
}

ReportSettings report_settings(const ReportOptions& options) {
  // The baseline is checked against the runs once they are loaded.
  ReportSettings settings{.baseline = static_cast<size_t>(std::max(options.baseline, 1) - 1),
                          .log_scale = options.log_scale};
  settings.target_accuracies.clear();
  for (const double percent : options.target_percents) {
    if (!(percent > 0 && percent <= 100)) {
      fail_input("--target-accuracy {}: give a percentage above 0, at most 100", percent);
    }
    // 0.9 could mean 90 % or 0.9 %: refused rather than guessed.
    if (percent <= 1) {
      fail_input("--target-accuracy {}: ambiguous, a fraction or a percentage? Give percentages: {} for {} %", percent,
                 100 * percent, 100 * percent);
    }
    settings.target_accuracies.push_back(percent / 100.0);
  }
  std::sort(settings.target_accuracies.begin(), settings.target_accuracies.end());
  return settings;
}

// trace.json: the timelines the runs left (trace-*.json), merged onto one time axis per run.
void write_timeline(const ReportOptions& options, const std::vector<RunRecord>& runs, const fs::path& out) {
  std::vector<TraceRun> timeline;
  for (size_t i = 0; i < runs.size(); ++i) {
    TraceRun run{runs[i].name, find_trace_files(options.run_dirs[i])};
    for (const auto& extra : options.traces) {
      for (auto& file : find_trace_files(extra)) run.files.push_back(std::move(file));
    }
    if (!run.files.empty()) timeline.push_back(std::move(run));
  }
  if (timeline.empty()) return;
  const TraceMergeResult merged = merge_traces(timeline, out / "trace.json");
  for (const auto& warning : merged.warnings) spdlog::warn("trace: {}", warning);
  if (merged.sources > 0) {
    fmt::print("timeline: {} ({} traces, {} events; open in Perfetto or chrome://tracing)\n",
               (out / "trace.json").string(), merged.sources, merged.events);
  }
}

// Runs of several models or data sets are judged per workload.
std::vector<std::string> workloads_of(const std::vector<RunRecord>& runs) {
  std::vector<std::string> workloads;
  for (const auto& run : runs) workloads.push_back(run.context.model + " on " + run.context.data_path);
  if (std::all_of(workloads.begin(), workloads.end(), [&](const auto& w) { return w == workloads.front(); })) return {};
  return workloads;
}

// The verdict over the runs given — or, for a sweep's representative runs, over every measured
// repetition of the sweep, labelled by configuration and judged per workload.
ReportSummary summarize(const std::vector<RunRecord>& runs, const std::optional<SweepView>& sweep,
                        const ReportSettings& settings) {
  if (!sweep) return summarize_runs(runs, settings.target_accuracies, {}, workloads_of(runs));
  std::vector<RunRecord> all;
  std::vector<std::string> labels, workloads;
  for (const auto& c : sweep->configurations) {
    for (const auto& dir : c.measured_runs) {
      try {
        all.push_back(load_run(dir));
      } catch (const InputError& error) {
        spdlog::warn("left out of the verdict: {}", error.what());
        continue;
      }
      all.back().name = c.id + "/" + dir.filename().string();
      labels.push_back(c.label);
      workloads.push_back(c.workload);
    }
  }
  return summarize_runs(all, settings.target_accuracies, labels, workloads);
}

}  // namespace

void write_report(const ReportOptions& options) {
  const ReportSettings settings = report_settings(options);
  if (!options.traces.empty() && options.run_dirs.size() > 1) {
    fail_input("--traces belongs to one run; with {} runs it is unclear whose traces they are",
               options.run_dirs.size());
  }
  for (const auto& path : options.traces) {
    if (!fs::exists(path)) fail_input("--traces {}: no such file or directory", path);
  }
  std::vector<RunRecord> runs;
  for (const auto& dir : options.run_dirs) runs.push_back(load_run(dir));
  // A sweep's run directories are named rep-<k>: the folder that holds them names the configuration.
  for (auto& run : runs) {
    const fs::path dir = fs::absolute(run.path).lexically_normal().parent_path();  // run.path: its report.json
    if (fs::exists(dir / "run.json") && run.name.find('/') == std::string::npos) {
      run.name = dir.parent_path().filename().string() + "/" + run.name;
    }
  }
  // Runs started in the same second under the same name share a directory name: tell them apart
  // by the folder that holds them (every run of a shared name, however many share it).
  std::map<std::string, int> uses;
  for (const auto& run : runs) ++uses[run.name];
  for (auto& run : runs) {
    if (uses[run.name] < 2 || run.name.find('/') != std::string::npos) continue;
    const fs::path dir = fs::absolute(run.path).lexically_normal().parent_path();  // run.path: its report.json
    run.name = dir.parent_path().filename().string() + "/" + run.name;
  }
  if (options.baseline < 1 || static_cast<size_t>(options.baseline) > runs.size()) {
    fail_input("--baseline {}: choose a run from 1 to {}", options.baseline, runs.size());
  }
  std::vector<ReportTable> tables = runs.size() == 1 ? single_run_tables(runs.front(), settings)
                                                     : comparison_tables(runs, settings);
  std::vector<std::string> staleness_charts;
  for (const auto& run : runs) {
    if (!run.parameter_server()) continue;
    const std::vector<ServerRecord> servers = load_servers(run);
    if (servers.empty()) continue;
    tables.push_back(servers_table(run.name, servers));
    if (auto chart = staleness_chart(run.name, servers); !chart.empty()) staleness_charts.push_back(std::move(chart));
  }
  for (const auto& run : runs) {
    fmt::print("{} — transport {}, {} worker(s), {} epoch(s){}\n", run.name, run.transport, run.world,
               run.epochs.size(), run.complete() ? "" : "  " + incomplete_note(run));
  }
  const std::optional<SweepView> sweep = find_sweep({options.run_dirs.begin(), options.run_dirs.end()});
  // A sweep's own statistics come first.
  const std::vector<ReportTable> sweep_tables = sweep ? sweep_result_tables(*sweep) : std::vector<ReportTable>();
  for (const auto& table : sweep_tables) fmt::print("\n{}", render_text(table));
  for (const auto& table : tables) fmt::print("\n{}", render_text(table));
  const ReportSummary summary = summarize(runs, sweep, settings);
  fmt::print("\nVerdict\n");
  for (const auto& [workload, verdict] : summary.verdicts) {
    if (!workload.empty()) fmt::print("  {}\n", workload);
    for (const auto& finding : verdict.findings) fmt::print("  {}\n", finding);
  }
  fmt::print("{}", warnings_text(summary.warnings));

  const fs::path out = !options.out.empty() ? fs::path(options.out)
                       : runs.size() == 1    ? fs::path(options.run_dirs.front())
                                             : fs::current_path();
  std::error_code error;
  fs::create_directories(out, error);
  if (error) fail_input("--out {}: cannot create the directory: {}", out.string(), error.message());
  write_file_atomically(out / "report.md", markdown(runs, summary, sweep_tables, tables));
  write_file_atomically(out / "phases.csv", phases_csv(runs));
  write_file_atomically(out / "report.html", report_html(runs, summary, tables, settings,
                                                                 {sweep_tables, sweep ? sweep_charts(*sweep)
                                                                                      : std::vector<std::string>()},
                                                                 staleness_charts));
  fmt::print("\nwritten: {}, {}, {}\n", (out / "report.md").string(), (out / "phases.csv").string(),
             (out / "report.html").string());
  write_timeline(options, runs, out);
}

}  // namespace dtbench
