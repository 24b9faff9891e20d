#include "launch/report/chart_axis.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

namespace dtbench {

namespace {

// A round spacing (1, 2 or 5 times a power of ten) giving about `ticks` intervals over `span`.
double tick_spacing(double span, int ticks) {
  if (span <= 0) return 1.0;
  const double raw = span / std::max(ticks, 1);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * power >= raw * (1 - 1e-9)) return m * power;
  }
  return 10.0 * power;
}

}  // namespace

ChartAxis ChartAxis::linear(double low, double high, int ticks) {
  ChartAxis axis;
  if (!std::isfinite(low)) low = 0.0;  // no data to place: an axis from 0 all the same
  if (!std::isfinite(high)) high = low;
  if (!(high > low)) high = low + 1.0;  // one value, or none: an axis around it all the same
  const double spacing = tick_spacing(high - low, ticks);
  axis.low_ = std::floor(low / spacing + 1e-9) * spacing;
  axis.high_ = std::ceil(high / spacing - 1e-9) * spacing;
  const auto intervals = static_cast<int>(std::lround((axis.high_ - axis.low_) / spacing));
  for (int i = 0; i <= intervals; ++i) {
    const double t = axis.low_ + i * spacing;
    axis.ticks_.push_back(std::abs(t) < 1e-9 * spacing ? 0.0 : t);  // no "-0"
  }
  return axis;
}

ChartAxis ChartAxis::logarithmic(double low, double high) {
  ChartAxis axis;
  axis.log_ = true;
  if (!std::isfinite(high)) high = 0.0;  // NaN or infinity would never end the loop below
  if (!std::isfinite(low)) low = 0.0;
  low = low > 0 ? low : (high > 0 ? high / 10 : 1.0);
  high = std::max(high, low);
  // The round values 1, 2 and 5 times a power of ten from below `low` to at least `high`.
  std::vector<double> round_values;
  for (int decade = static_cast<int>(std::floor(std::log10(low))) - 1;; ++decade) {
    for (const double m : {1.0, 2.0, 5.0}) round_values.push_back(m * std::pow(10.0, decade));
    if (round_values.back() >= high * (1 - 1e-12)) break;
  }
  // Below the lowest value, so that its bar has a length; up to the first round value >= high.
  axis.low_ = *std::prev(std::lower_bound(round_values.begin(), round_values.end(), low * (1 - 1e-12)));
  axis.high_ = *std::lower_bound(round_values.begin(), round_values.end(), high * (1 - 1e-12));
  if (axis.high_ <= axis.low_) axis.high_ = axis.low_ * 2;
  // Every round value while the axis spans at most three decades, else only the powers of ten.
  const bool few_decades = axis.high_ / axis.low_ <= 1000 * (1 + 1e-9);
  for (const double value : round_values) {
    if (value < axis.low_ * (1 - 1e-9) || value > axis.high_ * (1 + 1e-9)) continue;
    const bool power_of_ten = std::abs(std::log10(value) - std::round(std::log10(value))) < 1e-9;
    if (few_decades || power_of_ten || value == axis.low_ || value == axis.high_) axis.ticks_.push_back(value);
  }
  return axis;
}

double ChartAxis::position(double value, double pixel_low, double pixel_high) const {
  double fraction = 0.0;
  if (log_) {
    const double v = std::clamp(value, low_, high_);
    fraction = (std::log10(v) - std::log10(low_)) / (std::log10(high_) - std::log10(low_));
  } else {
    fraction = (std::clamp(value, low_, high_) - low_) / (high_ - low_);
  }
  return pixel_low + fraction * (pixel_high - pixel_low);
}

std::string tick_text(double value) { return fmt::format("{:g}", value); }

}  // namespace dtbench
