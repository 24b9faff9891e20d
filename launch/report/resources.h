#pragma once
// A worker's sampled resources as `dtbench report` reads them from the "resources" object of its
// report (ResourceSampler::summary): the summary numbers for the tables, the series for the charts.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench {

struct GpuDeviceRecord {
  std::string name;
  double utilisation_percent_mean = 0.0, utilisation_percent_max = 0.0;
  double memory_used_bytes_max = 0.0, memory_total_bytes = 0.0;
  double power_watts_mean = 0.0, power_watts_max = 0.0;
  // Aligned with ResourceRecord::seconds; NaN where the device gave no reading.
  std::vector<double> utilisation_percent, memory_used_bytes, power_watts;
};

struct ResourceRecord {
  int rank = 0;
  int64_t samples = 0;
  double cpu_percent_mean = 0.0, cpu_percent_max = 0.0;  // of one core: 4 busy threads read 400
  double core_percent_mean = 0.0;                        // the machine's cores, mean of each core's mean
  double rss_bytes_mean = 0.0, peak_rss_bytes = 0.0;
  std::optional<double> bytes_sent, bytes_received;      // by the transport; absent in older reports
  std::vector<double> seconds, cpu_percent, rss_bytes;   // the series
  // GPU: `gpu_reason` says why there is none (empty in reports written before GPUs were sampled).
  bool gpu_available = false;
  std::string gpu_reason;
  std::vector<GpuDeviceRecord> gpus;
};

// The "resources" of `report` (read from `file`, for messages) as worker `rank`'s; nothing when the
// report has none. An InputError naming the file when the object is malformed.
std::optional<ResourceRecord> resource_record(const nlohmann::json& report, int rank,
                                              const std::filesystem::path& file);

}  // namespace dtbench
