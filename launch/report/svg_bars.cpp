// Horizontal bar charts: the phases of a step stacked, and one quantity per run.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "launch/report/chart_axis.h"
#include "launch/report/svg.h"
#include "launch/report/svg_canvas.h"

namespace dtbench {

namespace {

constexpr double kMargin = 8, kBarHeight = 26, kBarGap = 12, kFontSize = 13, kSmallFontSize = 11;

// Where the parts of a bar chart go: title and legend on top, labels left of the bars, the value
// after each bar, the axis below.
struct BarLayout {
  double width = 0, top = 0, left = 0, right = 0;
  // Long run names (a sweep's configurations) may take up to this much before they are cut.
  double label_room() const { return 0.45 * width; }
  size_t bars = 0;
  double bar_y(size_t i) const { return top + static_cast<double>(i) * (kBarHeight + kBarGap); }
  double axis_y() const { return bar_y(bars) - kBarGap / 2; }
  double plot_right() const { return width - right; }
};

// Title, then labels as wide as the longest (at most label_room()), room for the values.
BarLayout lay_out(SvgCanvas& canvas, const std::string& title, const std::vector<std::string>& labels,
                  const std::string& widest_value) {
  BarLayout layout;
  layout.width = canvas.width();
  layout.bars = labels.size();
  double y = kMargin;
  if (!title.empty()) {
    canvas.text(kMargin, y + 15, title, {.size = 15, .bold = true});
    y += 28;
  }
  layout.top = y;
  double label_width = 0;
  for (const auto& label : labels) label_width = std::max(label_width, text_width(label, kFontSize));
  layout.left = kMargin + std::min(label_width, layout.label_room()) + 10;
  layout.right = text_width(widest_value, kFontSize) + 2 * kMargin;
  return layout;
}

void draw_axis(SvgCanvas& canvas, const BarLayout& layout, const ChartAxis& axis, const std::string& title) {
  for (const double tick : axis.ticks()) {
    const double x = axis.position(tick, layout.left, layout.plot_right());
    canvas.line(x, layout.top - 4, x, layout.axis_y(), "#ddd");
    canvas.text(x, layout.axis_y() + 16, tick_text(tick), {.anchor = TextStyle::Anchor::Middle, .size = 12});
  }
  canvas.line(layout.left, layout.axis_y(), layout.plot_right(), layout.axis_y(), "#333");
  canvas.text((layout.left + layout.plot_right()) / 2, layout.axis_y() + 34, title,
              {.anchor = TextStyle::Anchor::Middle});
}

void draw_label(SvgCanvas& canvas, const BarLayout& layout, size_t i, const std::string& label) {
  canvas.text(layout.left - 8, layout.bar_y(i) + kBarHeight / 2 + 4.5, fit_text(label, kFontSize, layout.label_room()),
              {.anchor = TextStyle::Anchor::End});
}

}  // namespace

std::string phase_bars_svg(const std::string& title, const std::vector<PhaseBar>& bars, double width,
                           double axis_max_ms) {
  SvgCanvas canvas(width, 0);
  std::vector<std::string> labels;
  double longest_ms = axis_max_ms;
  for (const auto& bar : bars) {
    labels.push_back(bar.label);
    longest_ms = std::max(longest_ms, 1e3 * bar.mean_s[kStepIndex]);
  }
  BarLayout layout = lay_out(canvas, title, labels, fmt::format("{:.3f} ms", longest_ms));
  std::vector<LegendEntry> legend;
  for (size_t k = 0; k < kStepIndex; ++k) legend.push_back({std::string(kReportPhases[k]), phase_colour(k)});
  layout.top += draw_legend(canvas, kMargin, layout.top, width - 2 * kMargin, legend) + 10;

  const ChartAxis axis = ChartAxis::linear(0, longest_ms, width > 700 ? 8 : 5);
  draw_axis(canvas, layout, axis, "ms per step (mean)");
  for (size_t b = 0; b < bars.size(); ++b) {
    const double y = layout.bar_y(b);
    draw_label(canvas, layout, b, bars[b].label);
    double x = layout.left;
    for (size_t k = 0; k < kStepIndex; ++k) {
      const double value_ms = 1e3 * bars[b].mean_s[k];
      const double w = axis.position(value_ms, layout.left, layout.plot_right()) - layout.left;
      canvas.rect(x, y, w, kBarHeight, phase_colour(k),
                  fmt::format("{} {}: {:.3f} ms", bars[b].label, kReportPhases[k], value_ms));
      const std::string value = fmt::format("{:.2f}", value_ms);
      if (w > text_width(value, kSmallFontSize) + 6) {
        canvas.text(x + w / 2, y + kBarHeight / 2 + 4, value,
                    {.anchor = TextStyle::Anchor::Middle, .size = kSmallFontSize, .fill = "#fff"});
      }
      x += w;
    }
    canvas.text(x + 6, y + kBarHeight / 2 + 4.5, fmt::format("{:.3f} ms", 1e3 * bars[b].mean_s[kStepIndex]));
  }
  canvas.set_height(layout.axis_y() + 44);
  return canvas.str();
}

std::string value_bars_svg(const std::string& title, const std::vector<ValueBar>& bars, const std::string& unit,
                           bool log_scale, double width) {
  SvgCanvas canvas(width, 0);
  std::vector<std::string> labels;
  double low = 0.0, high = 0.0;
  for (const auto& bar : bars) {
    labels.push_back(bar.label);
    high = std::max(high, bar.value);
    if (bar.value > 0) low = low == 0 ? bar.value : std::min(low, bar.value);
  }
  // A whole number (a count of gradients, say) is shown as one: "9 gradients", not "9.00 gradients".
  auto value_text = [&](double value) {
    const int decimals = value == std::floor(value) ? 0 : value < 10 ? 2 : 1;
    return fmt::format("{:.{}f} {}", value, decimals, unit);
  };
  BarLayout layout = lay_out(canvas, title, labels, value_text(high));
  const ChartAxis axis =
      log_scale ? ChartAxis::logarithmic(low, high) : ChartAxis::linear(0, high, width > 700 ? 8 : 5);
  draw_axis(canvas, layout, axis, log_scale ? unit + " (log scale)" : unit);
  const double start = axis.position(axis.low(), layout.left, layout.plot_right());
  for (size_t b = 0; b < bars.size(); ++b) {
    const double y = layout.bar_y(b);
    draw_label(canvas, layout, b, bars[b].label);
    const double end = axis.position(bars[b].value, layout.left, layout.plot_right());
    canvas.rect(start, y, end - start, kBarHeight, series_colour(bars[b].colour),
                fmt::format("{}: {}", bars[b].label, value_text(bars[b].value)));
    canvas.text(end + 6, y + kBarHeight / 2 + 4.5, value_text(bars[b].value));
  }
  canvas.set_height(layout.axis_y() + 44);
  return canvas.str();
}

}  // namespace dtbench
