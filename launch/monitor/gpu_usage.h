#pragma once
// GPU readings over a run, for the resource sampler: per device the mean and maximum of
// utilisation, memory used and power over every reading, and the series kept for the report's
// chart (the sampler decides which readings the series keeps, and when to thin it).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/monitor/gpu_sampler.h"

namespace dtbench {

class GpuUsage {
 public:
  // One reading per device; `keep_in_series` when the sampler keeps this sample's point.
  void add(const std::vector<GpuReading>& readings, bool keep_in_series);
  // Drops every other point of the series, as the sampler does with its own.
  void halve_series();
  // One object per device: index, name, utilisation_percent / memory_used_bytes / power_watts as
  // {mean, max}, memory_total_bytes, and series {utilisation_percent, memory_used_bytes,
  // power_watts} (null where the device gave no reading).
  nlohmann::json devices_json(const std::vector<std::string>& names) const;

 private:
  struct Counter {
    double sum = 0.0, max = 0.0;
    int64_t count = 0;
    void add(double value);
    nlohmann::json to_json() const;  // {mean, max}, or null without a reading
  };
  struct Device {
    Counter utilisation_percent, memory_used_bytes, power_watts;
    int64_t memory_total_bytes = 0;
    std::vector<double> series_utilisation_percent, series_memory_used_bytes, series_power_watts;  // NaN: none
  };
  std::vector<Device> devices_;
};

}  // namespace dtbench
