#include "launch/report_svg.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "launch/report_table.h"

namespace dtbench {

namespace {

constexpr std::array<const char*, kReportPhaseCount - 1> kPhaseColours = {"#8c8c8c", "#4e79a7", "#f28e2b",
                                                                          "#e15759", "#59a14f", "#b07aa1"};
constexpr std::array<const char*, 8> kSeriesColours = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b",
                                                       "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};

// A round tick spacing (1, 2 or 5 times a power of ten) giving about `ticks` ticks up to `top`.
double tick_spacing(double top, int ticks) {
  if (top <= 0) return 1.0;
  const double raw = top / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10.0 * power;
}

std::string text(double x, double y, const std::string& content, const std::string& attributes = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" {}>{}</text>\n", x, y, attributes, escape_xml(content));
}

std::string legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out;
  for (const auto& [label, colour] : entries) {
    out += fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n", x, y - 10, colour);
    out += text(x + 16, y, label);
    x += 28 + 7.5 * static_cast<double>(label.size());
  }
  return out;
}

}  // namespace

std::string phase_bars_svg(const std::vector<PhaseBar>& bars) {
  constexpr double left = 230, plot_width = 640, top = 50, bar_height = 28, gap = 14;
  const double height = top + static_cast<double>(bars.size()) * (bar_height + gap) + 50;
  double longest = 0.0;
  for (const auto& bar : bars) longest = std::max(longest, 1e3 * bar.mean_s[kStepIndex]);
  const double spacing = tick_spacing(longest, 6);
  const double axis_end = std::max(spacing, std::ceil(longest / spacing) * spacing);
  const double scale = plot_width / axis_end;  // px per ms
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"{:.0f}\" viewBox=\"0 0 960 {:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"13\">\n",
      height, height);
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t k = 0; k < kPhaseColours.size(); ++k) entries.emplace_back(std::string(kReportPhases[k]), kPhaseColours[k]);
  out += legend(left, 20, entries);
  const double axis_y = top + static_cast<double>(bars.size()) * (bar_height + gap);
  for (double tick = 0; tick <= axis_end + 1e-9 * axis_end; tick += spacing) {
    const double x = left + tick * scale;
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", x, top - 6, x, axis_y);
    out += text(x, axis_y + 16, fmt::format("{:g}", tick), "text-anchor=\"middle\"");
  }
  out += text(left + plot_width / 2, axis_y + 36, "ms per step (mean)", "text-anchor=\"middle\"");
  for (size_t b = 0; b < bars.size(); ++b) {
    const PhaseBar& bar = bars[b];
    const double y = top + static_cast<double>(b) * (bar_height + gap);
    out += text(left - 8, y + bar_height / 2 + 4, bar.label, "text-anchor=\"end\"");
    double x = left;
    for (size_t k = 0; k < kPhaseColours.size(); ++k) {
      const double value_ms = 1e3 * bar.mean_s[k];
      const double w = value_ms * scale;
      out += fmt::format("<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" fill=\"{}\">", x, y,
                         std::max(0.0, w), bar_height, kPhaseColours[k]);
      out += fmt::format("<title>{} {}: {:.3f} ms</title></rect>\n", escape_xml(bar.label), kReportPhases[k], value_ms);
      if (w > 46) {
        out += text(x + w / 2, y + bar_height / 2 + 4, fmt::format("{:.2f}", value_ms),
                    "text-anchor=\"middle\" fill=\"#fff\" font-size=\"11\"");
      }
      x += w;
    }
    out += text(x + 6, y + bar_height / 2 + 4, fmt::format("{:.3f} ms", 1e3 * bar.mean_s[kStepIndex]));
  }
  out += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#333\"/>\n", left, axis_y,
                     left + plot_width);
  return out + "</svg>\n";
}

std::string accuracy_svg(const std::vector<AccuracySeries>& series) {
  constexpr double left = 70, top = 40, plot_width = 600, plot_height = 260;
  int last_epoch = 1;
  for (const auto& s : series) {
    for (const auto& [epoch, accuracy] : s.points) last_epoch = std::max(last_epoch, epoch);
  }
  const auto x_of = [&](int epoch) {
    return last_epoch == 1 ? left + plot_width / 2 : left + plot_width * (epoch - 1) / (last_epoch - 1);
  };
  const auto y_of = [&](double accuracy) { return top + plot_height * (1.0 - accuracy); };
  std::string out =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"360\" viewBox=\"0 0 960 360\" "
      "font-family=\"sans-serif\" font-size=\"13\">\n";
  for (int percent = 0; percent <= 100; percent += 20) {
    const double y = y_of(percent / 100.0);
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, y,
                       left + plot_width, y);
    out += text(left - 8, y + 4, fmt::format("{}%", percent), "text-anchor=\"end\"");
  }
  const int epoch_step = std::max(1, last_epoch / 10);
  for (int epoch = 1; epoch <= last_epoch; epoch += epoch_step) {
    out += text(x_of(epoch), top + plot_height + 18, std::to_string(epoch), "text-anchor=\"middle\"");
  }
  out += text(left + plot_width / 2, top + plot_height + 40, "epoch", "text-anchor=\"middle\"");
  out += text(18, top + plot_height / 2, "test accuracy",
              fmt::format("text-anchor=\"middle\" transform=\"rotate(-90 18 {:.1f})\"", top + plot_height / 2));
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < series.size(); ++i) {
    const char* colour = kSeriesColours[i % kSeriesColours.size()];
    entries.emplace_back(series[i].label, colour);
    std::string points;
    for (const auto& [epoch, accuracy] : series[i].points) points += fmt::format("{:.1f},{:.1f} ", x_of(epoch), y_of(accuracy));
    out += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", points, colour);
    for (const auto& [epoch, accuracy] : series[i].points) {
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{} epoch {}: {:.2f}%</title></circle>\n",
                         x_of(epoch), y_of(accuracy), colour, escape_xml(series[i].label), epoch, 100 * accuracy);
    }
  }
  double y = top + 10;
  for (const auto& entry : entries) {  // legend to the right of the plot, one line per series
    out += legend(left + plot_width + 20, y, {entry});
    y += 20;
  }
  out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n", left, top,
                     plot_width, plot_height);
  return out + "</svg>\n";
}

}  // namespace dtbench
