#include "launch/report/svg_canvas.h"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "launch/report/table.h"

namespace dtbench {

namespace {

constexpr double kLegendFontSize = 12;
constexpr double kLegendRowHeight = 18;
constexpr double kLegendSwatch = 12;
// Phases in the order of run_record.h's kReportPhases; the series from Tableau 10, chosen to stay
// apart for readers with the common colour-vision deficiencies.
const std::array<std::string, 6> kPhaseColours = {"#8c8c8c", "#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1"};
const std::array<std::string, 8> kSeriesColours = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b",
                                                   "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};

const char* anchor_name(TextStyle::Anchor anchor) {
  switch (anchor) {
    case TextStyle::Anchor::Middle: return "middle";
    case TextStyle::Anchor::End: return "end";
    default: return "start";
  }
}

std::string title_element(std::string_view tooltip) {
  return tooltip.empty() ? "" : "<title>" + escape_xml(std::string(tooltip)) + "</title>";
}

// UTF-8 continuation bytes do not start a character.
size_t characters(std::string_view text) {
  size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

}  // namespace

void SvgCanvas::text(double x, double y, std::string_view content, const TextStyle& style) {
  std::string attributes =
      fmt::format("x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{:g}\" fill=\"{}\"", x, y, style.size, escape_xml(style.fill));
  if (style.anchor != TextStyle::Anchor::Start) {
    attributes += fmt::format(" text-anchor=\"{}\"", anchor_name(style.anchor));
  }
  if (style.bold) attributes += " font-weight=\"bold\"";
  if (style.rotate_degrees != 0) {
    attributes += fmt::format(" transform=\"rotate({:g} {:.1f} {:.1f})\"", style.rotate_degrees, x, y);
  }
  body_ += fmt::format("<text {}>{}</text>\n", attributes, escape_xml(std::string(content)));
}

void SvgCanvas::rect(double x, double y, double width, double height, std::string_view fill, std::string_view tooltip) {
  body_ += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"{}\">{}</rect>\n", x,
                       y, std::max(0.0, width), std::max(0.0, height), escape_xml(std::string(fill)),
                       title_element(tooltip));
}

void SvgCanvas::line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width) {
  body_ += fmt::format(
      "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"{:g}\"/>\n", x1, y1,
      x2, y2, escape_xml(std::string(stroke)), stroke_width);
}

void SvgCanvas::polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, bool dashed) {
  std::string coordinates;
  for (const auto& [x, y] : points) coordinates += fmt::format("{:.1f},{:.1f} ", x, y);
  body_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", coordinates,
                       escape_xml(std::string(stroke)), dashed ? " stroke-dasharray=\"6 4\"" : "");
}

void SvgCanvas::marker(double cx, double cy, Marker shape, double radius, std::string_view fill,
                       std::string_view tooltip) {
  const std::string colour = escape_xml(std::string(fill));
  switch (shape) {
    case Marker::None: return;
    case Marker::Circle:
      body_ += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:g}\" fill=\"{}\">{}</circle>\n", cx, cy, radius,
                           colour, title_element(tooltip));
      return;
    case Marker::Square:
      return rect(cx - radius, cy - radius, 2 * radius, 2 * radius, fill, tooltip);
    case Marker::Diamond: {
      const double r = 1.4 * radius;  // the same area as the square
      body_ += fmt::format(
          "<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\" fill=\"{}\">{}</polygon>\n", cx,
          cy - r, cx + r, cy, cx, cy + r, cx - r, cy, colour, title_element(tooltip));
      return;
    }
  }
}

std::string SvgCanvas::str() const {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "font-family=\"sans-serif\">\n{2}</svg>\n",
      width_, height_, body_);
}

double text_width(std::string_view text, double size) { return 0.6 * size * static_cast<double>(characters(text)); }

std::string fit_text(const std::string& text, double size, double max_width) {
  if (text_width(text, size) <= max_width) return text;
  // Cut from the middle: run names differ at the start (the configuration) and at the end (the
  // repetition, the transport), so both ends are kept.
  std::vector<size_t> starts;  // where each character (UTF-8 code point) begins
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  const auto fits = static_cast<size_t>(std::max(0.0, max_width / (0.6 * size) - 3.0));
  const size_t head = (fits + 1) / 2, tail = fits - head;
  const size_t head_end = head < starts.size() ? starts[head] : text.size();
  const size_t tail_start = tail == 0 ? text.size() : starts[starts.size() - std::min(tail, starts.size())];
  return text.substr(0, head_end) + "..." + text.substr(std::max(head_end, tail_start));
}

double draw_legend(SvgCanvas& canvas, double x, double top, double width, const std::vector<LegendEntry>& entries) {
  double at = x, baseline = top + kLegendFontSize;
  for (const auto& entry : entries) {
    const bool line = entry.swatch != LegendEntry::Swatch::Box;
    const double swatch_width = line ? 2 * kLegendSwatch : kLegendSwatch;
    const std::string label = fit_text(entry.label, kLegendFontSize, width - swatch_width - 6);
    const double entry_width = swatch_width + 6 + text_width(label, kLegendFontSize) + 18;
    if (at > x && at + entry_width > x + width) {  // next row
      at = x;
      baseline += kLegendRowHeight;
    }
    if (line) {
      canvas.polyline({{at, baseline - 4}, {at + swatch_width, baseline - 4}}, entry.colour,
                      entry.swatch == LegendEntry::Swatch::DashedLine);
      canvas.marker(at + swatch_width / 2, baseline - 4, entry.marker, 3.5, entry.colour);
    } else {
      canvas.rect(at, baseline - kLegendSwatch + 1, kLegendSwatch, kLegendSwatch, entry.colour);
    }
    canvas.text(at + swatch_width + 6, baseline, label, {.size = kLegendFontSize});
    at += entry_width;
  }
  return entries.empty() ? 0.0 : baseline - top + 6;
}

const std::string& phase_colour(size_t phase) { return kPhaseColours[phase % kPhaseColours.size()]; }
const std::string& series_colour(size_t index) { return kSeriesColours[index % kSeriesColours.size()]; }
Marker series_marker(size_t index) {
  constexpr std::array<Marker, 3> kMarkers = {Marker::Circle, Marker::Square, Marker::Diamond};
  return kMarkers[index % kMarkers.size()];
}

}  // namespace dtbench
