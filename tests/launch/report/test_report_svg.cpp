// The charts of report.html on their own: axes, a log scale that keeps a tenfold gap readable,
// gaps for missing readings, labels that are escaped and cut to fit, and well-formed SVG throughout.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "launch/report/chart_axis.h"
#include "launch/report/charts.h"
#include "launch/report/run_record.h"
#include "launch/report/svg.h"
#include "launch/report/table.h"
#include "launch/report/svg_canvas.h"
#include "support/xml_check.h"

namespace dtbench {
namespace {

using testing::xml_error;

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The width of every <rect> whose <title> starts with `label`, in order.
std::vector<double> bar_widths(const std::string& svg, const std::string& label) {
  std::vector<double> widths;
  const std::regex rect("<rect [^>]*width=\"([0-9.]+)\"[^>]*><title>" + label);
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    widths.push_back(std::stod((*it)[1]));
  }
  return widths;
}

TEST(ChartAxis, LinearEndsOnRoundTicks) {
  const ChartAxis axis = ChartAxis::linear(0, 9.3, 5);
  EXPECT_EQ(axis.ticks(), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_DOUBLE_EQ(axis.position(5, 0, 100), 50);
  EXPECT_DOUBLE_EQ(axis.position(20, 0, 100), 100);  // clamped
  const ChartAxis flat = ChartAxis::linear(0, 0);     // all zeros still makes an axis
  EXPECT_GT(flat.high(), flat.low());
}

TEST(ChartAxis, LogarithmicEndsOnRoundValuesBelowAndAbove) {
  const ChartAxis axis = ChartAxis::logarithmic(3, 450);
  EXPECT_DOUBLE_EQ(axis.low(), 2);
  EXPECT_DOUBLE_EQ(axis.high(), 500);
  EXPECT_EQ(axis.ticks(), (std::vector<double>{2, 5, 10, 20, 50, 100, 200, 500}));
  EXPECT_DOUBLE_EQ(axis.position(std::sqrt(2.0 * 500.0), 0, 300), 150);  // equal ratios, equal distances
  // A value on a round number still gets a bar: the axis starts below it.
  EXPECT_DOUBLE_EQ(ChartAxis::logarithmic(10, 10).low(), 5);
  // Beyond three decades, only the powers of ten (and the ends) are ticked.
  EXPECT_EQ(ChartAxis::logarithmic(0.3, 4000).ticks(), (std::vector<double>{0.2, 1, 10, 100, 1000, 5000}));
}

TEST(ReportSvg, TimeBarsOnALogScaleKeepATenfoldGapReadable) {
  const std::vector<ValueBar> bars = {{"fast", 2.0, 0}, {"slow", 200.0, 1}};
  const std::string linear = value_bars_svg("Total", bars, "s", false);
  const std::string log = value_bars_svg("Total", bars, "s", true);
  EXPECT_EQ(xml_error(linear), "");
  EXPECT_EQ(xml_error(log), "");
  EXPECT_NE(log.find("s (log scale)"), std::string::npos);
  EXPECT_EQ(linear.find("log scale"), std::string::npos);
  const double linear_fast = bar_widths(linear, "fast").at(0), linear_slow = bar_widths(linear, "slow").at(0);
  const double log_fast = bar_widths(log, "fast").at(0), log_slow = bar_widths(log, "slow").at(0);
  EXPECT_NEAR(linear_slow / linear_fast, 100.0, 1.0);
  EXPECT_LT(log_slow / log_fast, 10.0);  // a hundredfold apart, but the short bar is no sliver
  EXPECT_GT(log_slow, log_fast);
}

TEST(ReportSvg, PhaseBarsStackToTheStepAndCutLongLabels) {
  PhaseBar bar{.label = std::string(200, 'x') + " <&>", .mean_s = {0.001, 0.002, 0.003, 0.004, 0.0005, 0.0005, 0.011}};
  const std::string svg = phase_bars_svg("Phases", {bar}, kHalfChart);
  EXPECT_EQ(xml_error(svg), "");
  EXPECT_NE(svg.find("xxx..."), std::string::npos);       // cut on the axis
  EXPECT_NE(svg.find("&lt;&amp;&gt;"), std::string::npos);  // whole, escaped, in the tooltip
  for (const char* phase : {"load", "forward", "backward", "comm", "update", "other"}) {
    EXPECT_NE(svg.find(std::string(">") + phase + "</text>"), std::string::npos) << phase << " missing from the legend";
  }
  EXPECT_NE(svg.find("11.000 ms"), std::string::npos);
}

// Names differ at both ends (a sweep's configuration, then its repetition): both are kept.
TEST(ReportSvg, LongLabelsLoseTheirMiddle) {
  EXPECT_EQ(fit_text("abcdefghijklmnopqrstuvwxyz", 10, 13 * 6.0), "abcde...vwxyz");
  EXPECT_EQ(fit_text("short", 10, 13 * 6.0), "short");
  EXPECT_EQ(fit_text("ééééééééééééééééé", 10, 13 * 6.0), "ééééé...ééééé");  // cut between characters
}

TEST(ReportSvg, ControlCharactersAndNonFiniteBoundsKeepChartsWellFormed) {
  EXPECT_EQ(escape_xml("\x1b[31merror\x1b[0m\tok"), "&#xFFFD;[31merror&#xFFFD;[0m\tok");
  const ChartAxis nan_axis = ChartAxis::logarithmic(std::nan(""), std::nan(""));
  EXPECT_FALSE(nan_axis.ticks().empty());
  const ChartAxis inf_axis = ChartAxis::linear(0.0, std::numeric_limits<double>::infinity());
  for (const double tick : inf_axis.ticks()) EXPECT_TRUE(std::isfinite(tick));
}

TEST(ReportSvg, LineChartsBreakAtMissingReadingsAndLabelEverySeries) {
  const double gap = std::numeric_limits<double>::quiet_NaN();
  LineChart chart{.title = "GPU utilisation", .x_title = "seconds", .y_title = "%"};
  chart.series.push_back({.label = "rank 0", .colour = 0, .points = {{0, 10}, {1, 20}, {2, gap}, {3, 30}, {4, 40}}});
  chart.series.push_back({.label = "rank 1 train", .colour = 1, .dashed = true, .points = {{0, 5}, {4, 15}}});
  const std::string svg = line_chart_svg(chart);
  EXPECT_EQ(xml_error(svg), "");
  EXPECT_EQ(count(svg, "<polyline"), 2u + 1u + 2u);  // rank 0 in two pieces, rank 1, the legend's two lines
  EXPECT_EQ(count(svg, "stroke-dasharray"), 2u);      // rank 1 and its legend entry
  EXPECT_EQ(count(svg, "<circle"), 4u + 1u);  // rank 0's, less the missing reading, and its legend's
  EXPECT_EQ(count(svg, "<rect"), 2u + 1u);    // rank 1's squares and its legend's
  EXPECT_NE(svg.find(">rank 0</text>"), std::string::npos);
  EXPECT_NE(svg.find(">rank 1 train</text>"), std::string::npos);
}

}  // namespace
}  // namespace dtbench

namespace dtbench {
namespace {

// The largest tick label on a chart's value axis.
double largest_tick(const std::string& svg) {
  double largest = 0;
  const std::regex tick(R"(<text[^>]*>([0-9]+(\.[0-9]+)?)</text>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it) {
    largest = std::max(largest, std::stod((*it)[1].str()));
  }
  return largest;
}

// Two runs' per-worker charts side by side share one scale: a run ten times faster draws bars a
// tenth as long, not bars of the same length on an axis of its own.
TEST(ReportSvg, PerWorkerChartsOfSeveralRunsShareOneScale) {
  const auto run = [](const std::string& name, double step_s) {
    RunRecord r;
    r.name = name;
    r.transport = "ring";
    for (int rank = 0; rank < 2; ++rank) {
      WorkerMeans w;
      w.rank = rank;
      w.mean_s[kStepIndex] = step_s;
      w.mean_s[0] = step_s;  // all of it loading: any phase will do
      r.workers.push_back(w);
    }
    return r;
  };
  const auto charts = worker_phase_charts({run("fast", 0.010), run("slow", 0.100)});
  ASSERT_EQ(charts.size(), 2u);
  EXPECT_GE(largest_tick(charts[0]), 100.0);
  EXPECT_EQ(largest_tick(charts[0]), largest_tick(charts[1]));
  // Alone, the fast run gets an axis of its own.
  EXPECT_LT(largest_tick(worker_phase_charts({run("fast", 0.010)})[0]), 100.0);
}

}  // namespace
}  // namespace dtbench
