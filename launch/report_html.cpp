#include "launch/report_html.h"

#include <fmt/format.h>

#include "launch/report_svg.h"
#include "launch/report_tables.h"

namespace dtbench {

namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}"
    "table{border-collapse:collapse;margin:8px 0 4px}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;font-variant-numeric:tabular-nums}"
    "th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}"
    ".note{color:#555;font-size:90%;margin-top:2px}.incomplete{color:#b00;font-weight:bold}";

// One bar per run, or for a single run of several workers one per worker as well.
std::vector<PhaseBar> phase_bars(const std::vector<RunRecord>& runs) {
  std::vector<PhaseBar> bars;
  for (const auto& run : runs) bars.push_back({runs.size() == 1 ? run.name + " (all epochs)" : run.name, mean_phases(run.epochs, 0)});
  if (runs.size() == 1) {
    for (const auto& w : runs.front().workers) bars.push_back({fmt::format("rank {}", w.rank), w.mean_s});
  }
  return bars;
}

std::vector<AccuracySeries> accuracy_series(const std::vector<RunRecord>& runs) {
  std::vector<AccuracySeries> series;
  for (const auto& run : runs) {
    AccuracySeries s;
    s.label = run.name;
    for (const auto& e : run.epochs) s.points.emplace_back(e.epoch, e.test_accuracy);
    series.push_back(s);
  }
  return series;
}

}  // namespace

std::string report_html(const std::vector<RunRecord>& runs, const std::vector<ReportTable>& tables) {
  std::string out = "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
                    "<meta charset=\"utf-8\"/>\n<title>dtbench report</title>\n<style>";
  out += kStyle;
  out += "</style>\n</head>\n<body>\n<h1>dtbench report</h1>\n<ul>\n";
  for (const auto& run : runs) {
    out += fmt::format("<li>{} — transport {}, {} worker(s), {} epoch(s)", escape_xml(run.name),
                       escape_xml(run.transport), run.world, run.epochs.size());
    if (!run.complete()) out += " <span class=\"incomplete\">" + escape_xml(incomplete_note(run)) + "</span>";
    out += "</li>\n";
  }
  out += "</ul>\n<h2>Phases per step</h2>\n" + phase_bars_svg(phase_bars(runs));
  out += "<h2>Test accuracy per epoch</h2>\n" + accuracy_svg(accuracy_series(runs));
  out += "<h2>Tables</h2>\n";
  for (const auto& table : tables) out += render_html(table);
  return out + "</body>\n</html>\n";
}

}  // namespace dtbench
