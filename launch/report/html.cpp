#include "launch/report/html.h"

#include <set>

#include <fmt/format.h>

#include "launch/report/charts.h"
#include "launch/report/scaling_charts.h"
#include "launch/report/tables.h"

namespace dtbench {

namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}"
    "h2{margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px 16px;align-items:flex-start}"
    "svg{max-width:100%;height:auto}"
    "table{border-collapse:collapse;margin:8px 0 4px;font-size:14px}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;font-variant-numeric:tabular-nums}"
    // Numbers stay on one line; run names (the first column) may break at their hyphens.
    "td{white-space:nowrap}td:first-child{white-space:normal;min-width:12em}"
    "th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}"
    ".note{color:#555;font-size:90%;margin-top:2px}.incomplete{color:#b00;font-weight:bold}"
    ".provenance{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:0 0 8px;font-size:14px}"
    ".provenance dt{font-weight:bold;color:#444}.provenance dd{margin:0}"
    ".verdict{background:#eef5ee;border-left:5px solid #2a7a2a;padding:2px 16px 8px;margin:12px 0}"
    ".verdict h2{border:none;margin-top:10px}.verdict li{margin:3px 0}.verdict .answer{font-weight:bold;font-size:110%}"
    ".warnings{background:#fff6e0;border-left:5px solid #c80;padding:8px 16px;margin:12px 0}"
    ".warnings li{margin:3px 0}";

std::string charts_row(const std::vector<std::string>& charts) {
  std::string out = "<div class=\"charts\">\n";
  for (const auto& chart : charts) out += chart;
  return out + "</div>\n";
}

std::string runs_list(const std::vector<RunRecord>& runs) {
  std::string out = "<ul>\n";
  for (const auto& run : runs) {
    out += fmt::format("<li>{} — transport {}, {} worker(s), {} epoch(s)", escape_xml(run.name),
                       escape_xml(run.transport), run.world, run.epochs.size());
    if (!run.complete()) out += " <span class=\"incomplete\">" + escape_xml(incomplete_note(run)) + "</span>";
    out += "</li>\n";
  }
  return out + "</ul>\n";
}

std::string resources_section(const std::vector<RunRecord>& runs) {
  std::string out = "<h2>Resources over time</h2>\n";
  std::vector<std::string> charts;
  std::set<std::string> gpu_reasons;
  for (const auto& run : runs) {
    if (run.resources.empty()) continue;
    const auto run_charts = resource_charts(run, runs.size() == 1 ? "" : ", " + run.name);
    charts.insert(charts.end(), run_charts.begin(), run_charts.end());
    for (const auto& r : run.resources) {
      if (!r.gpu_available && !r.gpu_reason.empty()) gpu_reasons.insert(r.gpu_reason);
    }
  }
  if (charts.empty()) {
    return out + fmt::format("<p class=\"note\">Too few resource samples to draw (fewer than {} per worker; "
                             "sampled once a second).</p>\n", kFewestResourceSamples);
  }
  out += charts_row(charts);
  out += "<p class=\"note\">Sampled once a second by each worker. CPU is the process's, in percent of one core.";
  for (const auto& reason : gpu_reasons) out += " GPU not sampled: " + escape_xml(reason) + ".";
  return out + "</p>\n";
}

}  // namespace

std::string report_html(const std::vector<RunRecord>& runs, const ReportSummary& summary,
                        const std::vector<ReportTable>& tables,
                        const ReportSettings& settings, const SweepPart& sweep,
                        const std::vector<std::string>& staleness_charts) {
  std::string out = "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
                    "<meta charset=\"utf-8\"/>\n<title>dtbench report</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<h1>dtbench report</h1>\n" + summary_html(summary);
  if (!sweep.tables.empty() || !sweep.charts.empty()) {
    out += "<h2>Sweep: every measured repetition</h2>\n" + charts_row(sweep.charts);
    for (const auto& table : sweep.tables) out += render_html(table);
  }
  out += "<h2>Runs</h2>\n" + runs_list(runs);
  out += "<h2>Phases per step</h2>\n" + phases_chart(runs);
  const auto per_worker = worker_phase_charts(runs);
  if (!per_worker.empty()) out += "<h2>Phases per step, per worker</h2>\n" + charts_row(per_worker);
  if (!staleness_charts.empty()) {
    out += "<h2>Parameter servers: gradient staleness</h2>\n" + charts_row(staleness_charts) +
           "<p class=\"note\">Updates a shard applied between a worker's pull and its push, all shards together; "
           "queue and apply times per shard are in the tables.</p>\n";
  }
  if (const auto scaling = scaling_charts(runs); !scaling.empty()) {
    out += "<h2>Scaling</h2>\n" + charts_row(scaling) +
           "<p class=\"note\">Throughput (images/s, all workers) over the one-worker run's, or over the transport's "
           "fewest workers where there is none; efficiency is the speed-up per worker added. Bytes: what rank 0 "
           "sent per step.</p>\n";
  }
  out += "<h2>Time</h2>\n" + time_chart(runs, settings.log_scale);
  out += "<h2>Accuracy and loss per epoch</h2>\n" + charts_row({accuracy_chart(runs), loss_chart(runs)});
  out += resources_section(runs);
  out += "<h2>Tables</h2>\n";
  for (const auto& table : tables) out += render_html(table);
  return out + "</body>\n</html>\n";
}

}  // namespace dtbench
