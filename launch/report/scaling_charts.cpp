#include "launch/report/scaling_charts.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "comm/transport_catalogue.h"
#include "launch/report/charts.h"
#include "launch/report/format.h"
#include "launch/report/statistics.h"
#include "launch/report/svg.h"

namespace dtbench {

namespace {

// Median images/s per (transport, workers), straggler runs left out.
std::map<std::pair<std::string, int>, double> median_throughputs(const std::vector<RunRecord>& runs) {
  std::map<std::pair<std::string, int>, std::vector<double>> values;
  for (const auto& run : runs) {
    if (run.complete() && !run.context.has_straggler()) values[{run.transport, run.world}].push_back(run.images_per_second);
  }
  std::map<std::pair<std::string, int>, double> medians;
  for (const auto& [key, v] : values) medians[key] = spread_of(v).median;
  return medians;
}

LineChart scaling_chart(std::string title, std::string y_title, double width) {
  return LineChart{.title = std::move(title), .x_title = "workers", .y_title = std::move(y_title), .integer_x = true,
                   .width = width};
}

// What rank 0 sent per step, per transport against workers, beside the gradient it synchronises.
std::string bytes_per_step_chart(const std::vector<RunRecord>& runs) {
  LineChart chart = scaling_chart("Bytes sent per step by a worker", "sent per step", kHalfChart);
  chart.y_text = [](double bytes) { return bytes_text(bytes); };
  std::map<std::string, LineSeries> by_transport;
  double gradient_bytes = 0.0;
  std::set<int> worlds;
  for (const auto& run : runs) {
    if (!run.complete() || exchanges_nothing(run.transport) || run.context.has_straggler()) continue;
    LineSeries& s = by_transport[run.transport];
    s.label = run.transport;
    s.colour = transport_colour(run.transport);
    s.points.emplace_back(run.world, mean_comm(run.epochs, 0).bytes_sent);
    gradient_bytes = std::max(gradient_bytes, 4.0 * static_cast<double>(run.context.parameters));
    worlds.insert(run.world);
  }
  for (auto& [transport, s] : by_transport) {
    std::sort(s.points.begin(), s.points.end());
    chart.series.push_back(s);
  }
  if (gradient_bytes > 0 && !worlds.empty()) {
    chart.series.push_back({.label = "gradient (4 B x parameters)", .colour = transport_row(kLocalTransport).chart_colour, .dashed = true,
                            .points = {{*worlds.begin(), gradient_bytes}, {*worlds.rbegin(), gradient_bytes}}});
  }
  return line_chart_svg(chart);
}

}  // namespace

std::vector<ScalingPoint> scaling_points(const std::vector<RunRecord>& runs) {
  const auto medians = median_throughputs(runs);
  std::set<int> worlds;
  for (const auto& [key, ips] : medians) worlds.insert(key.second);
  if (worlds.size() < 2) return {};
  // The yardstick: a one-worker run of any transport, else each transport's fewest workers.
  const auto single = std::find_if(medians.begin(), medians.end(), [](const auto& m) { return m.first.second == 1; });
  std::vector<ScalingPoint> points;
  for (const auto& [key, ips] : medians) {
    const auto& [transport, world] = key;
    if (world == 1 && single != medians.end()) continue;
    auto base = single;
    if (base == medians.end()) {
      base = std::find_if(medians.begin(), medians.end(), [&](const auto& m) { return m.first.first == transport; });
    }
    if (!(base->second > 0)) continue;
    const double speedup = ips / base->second;
    points.push_back({transport, world, speedup, speedup * base->first.second / world, base->first.second});
  }
  return points;
}

std::vector<std::string> scaling_charts(const std::vector<RunRecord>& runs) {
  const std::vector<ScalingPoint> points = scaling_points(runs);
  if (points.empty()) return {};
  LineChart speedup = scaling_chart("Speed-up in throughput", "x the yardstick's images/s", kHalfChart);
  LineChart efficiency = scaling_chart("Scaling efficiency", "speed-up per worker", kHalfChart);
  efficiency.y_text = [](double v) { return fmt::format("{:g}%", v); };
  efficiency.y_max = 100.0;
  std::map<std::string, size_t> series;
  for (const auto& p : points) {
    if (!series.contains(p.transport)) {
      series[p.transport] = speedup.series.size();
      // Each line starts at its yardstick: 1x, 100 %.
      speedup.series.push_back({.label = p.transport, .colour = transport_colour(p.transport),
                                .points = {{p.yardstick_world, 1.0}}});
      efficiency.series.push_back({.label = p.transport, .colour = transport_colour(p.transport),
                                   .points = {{p.yardstick_world, 100.0}}});
    }
    speedup.series[series[p.transport]].points.emplace_back(p.world, p.speedup);
    efficiency.series[series[p.transport]].points.emplace_back(p.world, 100.0 * p.efficiency);
  }
  LineSeries ideal{.label = "ideal", .colour = transport_row(kLocalTransport).chart_colour, .dashed = true, .points = {{1, 1}}};
  for (const auto& p : points) ideal.points.emplace_back(p.world, static_cast<double>(p.world));
  std::sort(ideal.points.begin(), ideal.points.end());
  if (std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) { return r.world == 1; })) {
    speedup.series.push_back(ideal);  // linear speed-up is the ideal only against one worker
  }
  return {line_chart_svg(speedup), line_chart_svg(efficiency), bytes_per_step_chart(runs)};
}

}  // namespace dtbench
