#pragma once
// The charts of report.html as inline SVG (no scripts, no external resources): stacked bars of the
// phases per step, bars of one quantity (on a linear or logarithmic axis), and line charts. Each
// chart carries its title and legend, so it reads on its own when several sit side by side.
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launch/report/run_record.h"

namespace dtbench {

// Chart widths: one across the page, or one of two side by side.
inline constexpr double kWideChart = 960;
inline constexpr double kHalfChart = 520;

struct PhaseBar {
  std::string label{};
  std::array<double, kReportPhaseCount> mean_s{};  // seconds per step; the last is the step
};

struct ValueBar {
  std::string label{};
  double value = 0.0;
  size_t colour = 0;  // series_colour index: the same run in the same colour in every chart
};

struct LineSeries {
  std::string label{};
  size_t colour = 0;  // series_colour index
  bool dashed = false;
  std::vector<std::pair<double, double>> points{};  // (x, y); a NaN y leaves a gap
};

struct LineChart {
  std::string title{}, x_title{}, y_title{};
  std::vector<LineSeries> series{};
  std::function<std::string(double)> y_text{};  // tick labels; default tick_text
  std::optional<double> y_max{};                // at least this high (100 for percentages)
  bool y_from_zero = true;                      // else from the lowest value, to tell close curves apart
  bool log_y = false;                           // a logarithmic value axis (losses that fall tenfold)
  bool integer_x = false;                     // epochs: ticks at whole numbers only
  double width = kWideChart;
  double plot_height = 220;
};

// `axis_max_ms`: the axis reaches at least this far, so that small multiples share one scale.
std::string phase_bars_svg(const std::string& title, const std::vector<PhaseBar>& bars, double width = kWideChart,
                           double axis_max_ms = 0);
// `unit` follows each bar's value ("s"); the axis is logarithmic when `log_scale`.
std::string value_bars_svg(const std::string& title, const std::vector<ValueBar>& bars, const std::string& unit,
                           bool log_scale, double width = kWideChart);
std::string line_chart_svg(const LineChart& chart);

}  // namespace dtbench
