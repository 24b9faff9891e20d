#pragma once
// The drawing surface of report.html's charts: an <svg> element built from a few shapes. Every
// attribute is quoted and every text escaped here, so the charts are well-formed XML by
// construction, and a chart needs no script or font to show.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dtbench {

// Point markers. Lines of equal values hide one another; their markers, of different shapes, do not.
enum class Marker { None, Circle, Square, Diamond };

struct TextStyle {
  enum class Anchor { Start, Middle, End };
  Anchor anchor = Anchor::Start;
  double size = 13;  // px
  std::string fill = "#222";
  bool bold = false;
  double rotate_degrees = 0;  // about the text's (x, y)
};

class SvgCanvas {
 public:
  SvgCanvas(double width, double height) : width_(width), height_(height) {}
  double width() const { return width_; }
  double height() const { return height_; }
  // Charts that lay out top to bottom learn their height last.
  void set_height(double height) { height_ = height; }

  void text(double x, double y, std::string_view content, const TextStyle& style = {});
  // `tooltip`, when given, shows on hover (an SVG <title>).
  void rect(double x, double y, double width, double height, std::string_view fill, std::string_view tooltip = "");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double stroke_width = 1);
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view stroke, bool dashed);
  // A marker of about `radius` centred on (cx, cy).
  void marker(double cx, double cy, Marker shape, double radius, std::string_view fill, std::string_view tooltip = "");

  // The whole <svg> element.
  std::string str() const;

 private:
  double width_, height_;
  std::string body_;
};

// About how wide `text` is in a sans-serif font of `size` px (0.6 em a character, a little more
// than most glyphs take): enough to lay out labels and legends without measuring fonts.
double text_width(std::string_view text, double size);

// `text` cut to at most `max_width` px, its middle replaced by "..." when cut.
std::string fit_text(const std::string& text, double size, double max_width);

struct LegendEntry {
  enum class Swatch { Box, Line, DashedLine };  // as the chart draws the entry: bars, or lines
  std::string label;
  std::string colour;
  Swatch swatch = Swatch::Box;
  Marker marker = Marker::None;  // drawn on the line swatch
};

// Draws the entries in rows no wider than `width`, starting at (x, top); returns the height used.
double draw_legend(SvgCanvas& canvas, double x, double top, double width, const std::vector<LegendEntry>& entries);

// Colours: the phases (load, forward, backward, comm, update, other) and the runs or workers;
// and a marker shape for each run or worker, to go with its colour.
const std::string& phase_colour(size_t phase);
const std::string& series_colour(size_t index);
Marker series_marker(size_t index);

}  // namespace dtbench
