#pragma once
// A chart's value axis: its range, where its ticks go, and where a value lands in pixels. Linear
// axes round their ends outwards to ticks of 1, 2 or 5 times a power of ten; logarithmic ones end
// on such round values too (1, 2, 5, 10, 20, ...), so runs that differ tenfold or more stay
// readable side by side.
#include <string>
#include <vector>

namespace dtbench {

class ChartAxis {
 public:
  // From `low` (usually 0) to at least `high`, with about `ticks` ticks.
  static ChartAxis linear(double low, double high, int ticks = 5);
  // From the round value below `low` (so the smallest bar has a length) to the first at or above
  // `high`; both > 0. Ticked at every round value within three decades, else at powers of ten.
  static ChartAxis logarithmic(double low, double high);

  double low() const { return low_; }
  double high() const { return high_; }
  bool logarithmic() const { return log_; }
  const std::vector<double>& ticks() const { return ticks_; }
  // `value`'s position between `pixel_low` (for low()) and `pixel_high` (for high()); values off
  // the axis are clamped to its ends.
  double position(double value, double pixel_low, double pixel_high) const;

 private:
  double low_ = 0.0, high_ = 1.0;
  bool log_ = false;
  std::vector<double> ticks_;
};

// A tick's label: as short as "%g" writes it ("0.5", "20", "1e+04").
std::string tick_text(double value);

}  // namespace dtbench
