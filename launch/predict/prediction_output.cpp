#include "launch/predict/prediction_output.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/util/files.h"
#include "launch/report/csv.h"
#include "launch/report/format.h"
#include "launch/report/svg.h"

namespace dtbench {

namespace {

std::string crossover_text(const Crossover& c) {
  return fmt::format("at {}: {} is fastest up to {} workers, {} from {}", c.link, transport_name(c.from),
                     c.last_workers, transport_name(c.to), c.first_workers);
}

std::string layout_text(const ServerLayout& layout) {
  const std::string count = layout.shards > 0 ? fmt::format("{} shard(s)", layout.shards) : "a shard per worker";
  const std::string cores =
      layout.shared_cores > 0 ? fmt::format("; every host on {} shared core(s)", layout.shared_cores) : "";
  return count + (layout.beside_workers ? ", beside the workers" : ", on hosts of their own") + cores;
}

nlohmann::json constants_json(const NetworkConstants& c) {
  return {{"alpha_us", 1e6 * c.alpha_s}, {"beta_gbit_per_s", 8e-9 * c.beta_bytes_per_s},
          {"reduce_ns_per_byte", 1e9 * c.reduce_s_per_byte}, {"apply_ns_per_byte", 1e9 * c.apply_s_per_byte},
          {"tcp_cpu_ns_per_byte", 1e9 * c.cpu_s_per_byte},
          {"source", c.source}};
}

// One chart per link rate: `value` of each transport against log2 of the workers.
std::string chart(const PredictionGrid& grid, const std::string& link, const std::string& y_title,
                  double (*value)(const PredictionRow&), std::optional<double> y_max) {
  LineChart c{.title = fmt::format("{} at {}", y_title, link), .x_title = "workers (log2)", .y_title = y_title,
              .y_max = y_max, .integer_x = true, .width = kHalfChart};
  std::map<PredictTransport, size_t> series;
  for (const PredictionRow& row : grid.rows) {
    if (row.link != link) continue;
    if (!series.contains(row.transport)) {
      series[row.transport] = c.series.size();
      c.series.push_back({.label = std::string(transport_name(row.transport)), .colour = c.series.size()});
    }
    c.series[series[row.transport]].points.emplace_back(std::log2(row.workers), value(row));
  }
  return line_chart_svg(c);
}

std::string off_text(double model, double run) {
  return model >= 0 && run > 0 ? fmt::format("{:+.1f}%", 100 * (model / run - 1)) : "-";
}

std::string model_ms(double seconds) { return seconds >= 0 ? ms_text(seconds) : "-"; }

nlohmann::json run_check_json(const RunCheck& check, bool calibrated) {
  nlohmann::json terms = nlohmann::json::array();
  for (const CheckTerm& t : check.terms) {
    nlohmann::json term = {{"term", t.term}, {"run_s", t.run_s}};
    if (t.bench_s >= 0) term[t.estimate_only ? "estimate_s" : "bench_s"] = t.bench_s;
    if (t.calibrated_s >= 0) term["calibrated_s"] = t.calibrated_s;
    terms.push_back(term);
  }
  return {{"transport", transport_name(check.transport)}, {"link", check.link}, {"workers", check.workers},
          {"comm_scale", check.comm_scale}, {"calibrated", calibrated}, {"most_off", check.most_off},
          {"terms", terms}};
}

}  // namespace

ReportTable run_check_table(const RunCheck& check, bool calibrated) {
  ReportTable t = titled_table(
      fmt::format("The model against the run: {}, {} workers at {} (per step, ms)", transport_name(check.transport),
                  check.workers, check.link),
      {"term", "run", "bench alone", "off", calibrated ? "calibrated" : "calibrated (not used)", "off"});
  for (const CheckTerm& c : check.terms) {
    t.rows.push_back({c.term, ms_text(c.run_s), model_ms(c.bench_s), off_text(c.bench_s, c.run_s),
                      model_ms(c.calibrated_s), off_text(c.calibrated_s, c.run_s)});
  }
  t.note = check.most_off +
           (calibrated ? "; the predictions of this transport at this link take the run's comm (--no-calibrate: "
                         "the bench alone)"
                       : "; the predictions take the bench alone (--no-calibrate)") +
           ". A bucket's 'ready' beside it: the multiply-adds' estimate; the model uses the run's own";
  return t;
}

ReportTable prediction_table(const PredictionGrid& grid) {
  ReportTable t = titled_table(
      fmt::format("Predicted step of {} (compute {} ms per step alone)", grid.run.model,
                  ms_text(grid.run.workload.compute.total())),
      {"link", "transport", "workers", "step ms", "comm ms", "comm share", "speed-up", "efficiency", "staleness"});
  for (const PredictionRow& r : grid.rows) {
    t.rows.push_back({r.link, std::string(transport_name(r.transport)), fmt::format("{}", r.workers),
                      ms_text(r.step.step_s), ms_text(r.step.comm_exposed_s), percent_text(r.comm_share),
                      fmt::format("{:.1f}", r.speedup), percent_text(r.efficiency),
                      r.transport == PredictTransport::PsAsync ? fmt::format("{:g}", r.step.staleness) : "-"});
  }
  t.note = fmt::format("compute from {}; servers: {}; constants per transport and link in predict.json", grid.run.source,
                       layout_text(grid.layout));
  return t;
}

ReportTable crossover_table(const PredictionGrid& grid) {
  ReportTable t = titled_table("Where the fastest transport changes", {"crossover"});
  for (const Crossover& c : grid.crossovers) t.rows.push_back({crossover_text(c)});
  if (grid.crossovers.empty()) t.rows.push_back({"none: one transport is fastest at every worker count of each link"});
  return t;
}

nlohmann::json prediction_json(const PredictionGrid& grid) {
  nlohmann::json rows = nlohmann::json::array(), constants = nlohmann::json::object(), crossovers = nlohmann::json::array();
  for (const PredictionRow& r : grid.rows) {
    const std::string transport(transport_name(r.transport));
    rows.push_back({{"link", r.link}, {"transport", transport}, {"workers", r.workers}, {"step_s", r.step.step_s},
                    {"compute_s", r.step.compute_s}, {"comm_exposed_s", r.step.comm_exposed_s},
                    {"comm_total_s", r.step.comm_total_s}, {"comm_share", r.comm_share}, {"speedup", r.speedup},
                    {"efficiency", r.efficiency}, {"staleness", r.step.staleness},
                    {"constants_source", r.constants.source}, {"compute_source", grid.run.source}});
    constants[r.link][transport] = constants_json(r.constants);
  }
  for (const Crossover& c : grid.crossovers) {
    crossovers.push_back({{"link", c.link}, {"from", transport_name(c.from)}, {"to", transport_name(c.to)},
                          {"last_workers", c.last_workers}, {"first_workers", c.first_workers},
                          {"text", crossover_text(c)}});
  }
  const ComputePhases& p = grid.run.workload.compute;
  return {{"model", grid.run.model},
          {"measured_run", grid.run.source},
          {"compute_s", {{"load", p.load_s}, {"forward", p.forward_s}, {"backward", p.backward_s},
                         {"update", p.update_s}, {"other", p.other_s}, {"total", p.total()}}},
          {"gradient_bytes", grid.run.workload.gradient_bytes},
          {"buckets", grid.run.workload.bucket_bytes.size()},
          {"bucket_bytes", grid.run.workload.bucket_bytes},  // the sizes worth measuring with bench allreduce
          {"overlap", grid.run.workload.overlap},
          {"servers", layout_text(grid.layout)},
          {"reduce_ns_per_byte", 1e9 * grid.reduce_s_per_byte},
          {"constants", constants},
          {"predictions", rows},
          {"crossovers", crossovers},
          {"run_check", grid.check ? run_check_json(*grid.check, grid.calibrated) : nlohmann::json(nullptr)},
          {"bucket_ready", grid.run.workload.bucket_ready},
          {"bucket_ready_source", grid.run.ready_measured ? "the run's own bucket timings"
                                                          : "backward's multiply-adds per layer"}};
}

std::string prediction_csv(const PredictionGrid& grid) {
  std::string out = std::string(kPredictionCsvHeader) + "\n";
  for (const PredictionRow& r : grid.rows) {
    out += fmt::format("{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:g},{},{}\n", csv_field(r.link),
                       transport_name(r.transport), r.workers, 1e3 * r.step.step_s, 1e3 * r.step.compute_s,
                       1e3 * r.step.comm_exposed_s, 1e3 * r.step.comm_total_s, r.comm_share, r.speedup,
                       r.efficiency, r.step.staleness, csv_field(r.constants.source), csv_field(grid.run.source));
  }
  return out;
}

std::string prediction_html(const PredictionGrid& grid) {
  std::string out = "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
                    "<meta charset=\"utf-8\"/>\n<title>dtbench predict</title>\n<style>"
                    "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
                    "td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}</style>\n</head>\n<body>\n";
  out += "<h1>dtbench predict: " + escape_xml(grid.run.model) + "</h1>\n";
  std::vector<std::string> links;
  for (const PredictionRow& r : grid.rows) {
    if (links.empty() || links.back() != r.link) links.push_back(r.link);
  }
  for (const std::string& link : links) {
    out += "<div>" + chart(grid, link, "step ms", [](const PredictionRow& r) { return 1e3 * r.step.step_s; }, {});
    out += chart(grid, link, "scaling efficiency %", [](const PredictionRow& r) { return 100 * r.efficiency; }, 100.0);
    out += "</div>\n";
  }
  out += render_html(crossover_table(grid)) + render_html(prediction_table(grid));
  if (grid.check) out += render_html(run_check_table(*grid.check, grid.calibrated));
  return out + "</body>\n</html>\n";
}

void write_prediction(const PredictionGrid& grid, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "predict.json", prediction_json(grid).dump(2) + "\n");
  write_file_atomically(dir / "predict.csv", prediction_csv(grid));
  write_file_atomically(dir / "predict.html", prediction_html(grid));
}

}  // namespace dtbench
