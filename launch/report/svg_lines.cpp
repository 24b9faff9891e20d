// Line charts: accuracy and loss per epoch, resource use over time.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "launch/report/chart_axis.h"
#include "launch/report/svg.h"
#include "launch/report/svg_canvas.h"

namespace dtbench {

namespace {

constexpr double kLineChartMargin = 8, kLineChartFontSize = 12;
// Points are marked (with a tooltip each) only while they are few enough to tell apart.
constexpr size_t kMostMarkedPoints = 60;

ChartAxis x_axis(const LineChart& chart) {
  double low = INFINITY, high = -INFINITY;
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      low = std::min(low, x);
      high = std::max(high, x);
    }
  }
  if (!std::isfinite(low)) low = high = 0;
  if (!chart.integer_x) return ChartAxis::linear(std::min(low, 0.0), high, chart.width > 700 ? 10 : 5);
  // Epochs: whole-number ticks, at most ten; a single epoch sits in the middle.
  low = std::floor(low);
  high = std::ceil(high);
  if (high == low) {
    low -= 1;
    high += 1;
  }
  return ChartAxis::linear(low, high, static_cast<int>(std::min(10.0, high - low)));
}

ChartAxis y_axis(const LineChart& chart) {
  double low = INFINITY, high = chart.y_max.value_or(-INFINITY);
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(y)) continue;
      low = std::min(low, y);
      high = std::max(high, y);
    }
  }
  if (!std::isfinite(high)) high = 0;
  if (chart.log_y && std::isfinite(low) && low > 0) return ChartAxis::logarithmic(low, high);
  if (chart.y_from_zero || !std::isfinite(low)) low = std::min(0.0, high);
  return ChartAxis::linear(low, high, 5);
}

// The points of a series as runs of finite values: a missing reading breaks the line.
std::vector<std::vector<std::pair<double, double>>> segments(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::vector<std::pair<double, double>>> out(1);
  for (const auto& point : points) {
    if (std::isfinite(point.second)) {
      out.back().push_back(point);
    } else if (!out.back().empty()) {
      out.emplace_back();
    }
  }
  return out;
}

}  // namespace

std::string line_chart_svg(const LineChart& chart) {
  const std::function<std::string(double)> y_text = chart.y_text ? chart.y_text : tick_text;
  const ChartAxis x = x_axis(chart), y = y_axis(chart);
  double y_label_width = 0;
  for (const double tick : y.ticks()) y_label_width = std::max(y_label_width, text_width(y_text(tick), kLineChartFontSize));

  SvgCanvas canvas(chart.width, 0);
  canvas.text(kLineChartMargin, kLineChartMargin + 15, chart.title, {.size = 15, .bold = true});
  const double top = kLineChartMargin + 34;
  const double left = kLineChartMargin + 20 + y_label_width + 8;  // the rotated y title, then tick labels
  const double right = chart.width - kLineChartMargin - 12;
  const double bottom = top + chart.plot_height;
  const auto px = [&](double v) { return x.position(v, left, right); };
  const auto py = [&](double v) { return y.position(v, bottom, top); };

  for (const double tick : y.ticks()) {
    canvas.line(left, py(tick), right, py(tick), "#ddd");
    canvas.text(left - 6, py(tick) + 4, y_text(tick), {.anchor = TextStyle::Anchor::End, .size = kLineChartFontSize});
  }
  for (const double tick : x.ticks()) {
    if (chart.integer_x && tick != std::floor(tick)) continue;
    canvas.line(px(tick), bottom, px(tick), bottom + 4, "#333");
    canvas.text(px(tick), bottom + 18, tick_text(tick), {.anchor = TextStyle::Anchor::Middle, .size = kLineChartFontSize});
  }
  canvas.text((left + right) / 2, bottom + 36, chart.x_title, {.anchor = TextStyle::Anchor::Middle});
  canvas.text(kLineChartMargin + 12, (top + bottom) / 2, chart.y_title,
              {.anchor = TextStyle::Anchor::Middle, .rotate_degrees = -90});

  std::vector<LegendEntry> legend;
  for (const auto& s : chart.series) {
    const std::string& colour = series_colour(s.colour);
    legend.push_back({s.label, colour, s.dashed ? LegendEntry::Swatch::DashedLine : LegendEntry::Swatch::Line,
                      series_marker(s.colour)});
    for (const auto& segment : segments(s.points)) {
      std::vector<std::pair<double, double>> pixels;
      for (const auto& [vx, vy] : segment) pixels.emplace_back(px(vx), py(vy));
      if (pixels.size() > 1) canvas.polyline(pixels, colour, s.dashed);
    }
  }
  // Markers over every line, the first series' on top: where two runs' values coincide, the
  // shapes of both still show.
  for (auto s = chart.series.rbegin(); s != chart.series.rend(); ++s) {
    if (s->points.size() > kMostMarkedPoints) continue;
    for (const auto& [vx, vy] : s->points) {
      if (!std::isfinite(vy)) continue;
      canvas.marker(px(vx), py(vy), series_marker(s->colour), s->dashed ? 2.5 : 3.5, series_colour(s->colour),
                    fmt::format("{} at {}: {}", s->label, tick_text(vx), y_text(vy)));
    }
  }
  canvas.line(left, top, left, bottom, "#333");
  canvas.line(left, bottom, right, bottom, "#333");
  const double legend_height = draw_legend(canvas, left, bottom + 48, right - left, legend);
  canvas.set_height(bottom + 48 + legend_height + kLineChartMargin);
  return canvas.str();
}

}  // namespace dtbench
