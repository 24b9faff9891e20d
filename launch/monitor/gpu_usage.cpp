#include "launch/monitor/gpu_usage.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dtbench {

namespace {

constexpr double kNoReading = std::numeric_limits<double>::quiet_NaN();

template <typename T>
double or_nan(const std::optional<T>& value) {
  return value ? static_cast<double>(*value) : kNoReading;
}

// NaN becomes null: JSON has no NaN, and a gap in a series is what a missing reading is.
nlohmann::json series_json(const std::vector<double>& values) {
  nlohmann::json out = nlohmann::json::array();
  for (const double v : values) out.push_back(std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v));
  return out;
}

void keep_even(std::vector<double>& series) {
  size_t kept = 0;
  for (size_t i = 0; i < series.size(); i += 2) series[kept++] = series[i];
  series.resize(kept);
}

}  // namespace

void GpuUsage::Counter::add(double value) {
  sum += value;
  max = count == 0 ? value : std::max(max, value);
  ++count;
}

nlohmann::json GpuUsage::Counter::to_json() const {
  if (count == 0) return nullptr;
  return {{"mean", sum / static_cast<double>(count)}, {"max", max}};
}

void GpuUsage::add(const std::vector<GpuReading>& readings, bool keep_in_series) {
  if (devices_.size() < readings.size()) devices_.resize(readings.size());
  for (size_t i = 0; i < readings.size(); ++i) {
    const GpuReading& reading = readings[i];
    Device& device = devices_[i];
    if (reading.utilisation_percent) device.utilisation_percent.add(*reading.utilisation_percent);
    if (reading.memory_used_bytes) device.memory_used_bytes.add(static_cast<double>(*reading.memory_used_bytes));
    if (reading.power_watts) device.power_watts.add(*reading.power_watts);
    if (reading.memory_total_bytes) device.memory_total_bytes = *reading.memory_total_bytes;
    if (!keep_in_series) continue;
    device.series_utilisation_percent.push_back(or_nan(reading.utilisation_percent));
    device.series_memory_used_bytes.push_back(or_nan(reading.memory_used_bytes));
    device.series_power_watts.push_back(or_nan(reading.power_watts));
  }
}

void GpuUsage::halve_series() {
  for (Device& device : devices_) {
    keep_even(device.series_utilisation_percent);
    keep_even(device.series_memory_used_bytes);
    keep_even(device.series_power_watts);
  }
}

nlohmann::json GpuUsage::devices_json(const std::vector<std::string>& names) const {
  nlohmann::json out = nlohmann::json::array();
  const Device unread;  // a device named but not read yet
  for (size_t i = 0; i < std::max(devices_.size(), names.size()); ++i) {
    const Device& d = i < devices_.size() ? devices_[i] : unread;
    out.push_back({{"index", i},
                   {"name", i < names.size() ? names[i] : ""},
                   {"utilisation_percent", d.utilisation_percent.to_json()},
                   {"memory_used_bytes", d.memory_used_bytes.to_json()},
                   {"memory_total_bytes", d.memory_total_bytes},
                   {"power_watts", d.power_watts.to_json()},
                   {"series",
                    {{"utilisation_percent", series_json(d.series_utilisation_percent)},
                     {"memory_used_bytes", series_json(d.series_memory_used_bytes)},
                     {"power_watts", series_json(d.series_power_watts)}}}});
  }
  return out;
}

}  // namespace dtbench
