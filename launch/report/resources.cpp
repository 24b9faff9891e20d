#include "launch/report/resources.h"

#include <limits>

#include "core/util/error.h"

namespace dtbench {

namespace {

using nlohmann::json;

// A series of numbers in which null (a missing reading) becomes NaN.
std::vector<double> series(const json& values) {
  std::vector<double> out;
  if (!values.is_array()) return out;
  for (const json& v : values) {
    out.push_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

// {mean, max} of a counter; zeros when null (never read).
std::pair<double, double> mean_and_max(const json& counter) {
  if (!counter.is_object()) return {0.0, 0.0};
  return {counter.value("mean", 0.0), counter.value("max", 0.0)};
}

GpuDeviceRecord gpu_device(const json& d) {
  GpuDeviceRecord gpu;
  gpu.name = d.value("name", std::string());
  std::tie(gpu.utilisation_percent_mean, gpu.utilisation_percent_max) =
      mean_and_max(d.value("utilisation_percent", json()));
  gpu.memory_used_bytes_max = mean_and_max(d.value("memory_used_bytes", json())).second;
  gpu.memory_total_bytes = d.value("memory_total_bytes", 0.0);
  std::tie(gpu.power_watts_mean, gpu.power_watts_max) = mean_and_max(d.value("power_watts", json()));
  const json s = d.value("series", json::object());
  gpu.utilisation_percent = series(s.value("utilisation_percent", json()));
  gpu.memory_used_bytes = series(s.value("memory_used_bytes", json()));
  gpu.power_watts = series(s.value("power_watts", json()));
  return gpu;
}

ResourceRecord parse(const json& r, int rank) {
  ResourceRecord record;
  record.rank = rank;
  record.samples = r.value("samples", int64_t{0});
  std::tie(record.cpu_percent_mean, record.cpu_percent_max) = mean_and_max(r.value("cpu_percent", json()));
  const json cores = r.value("per_core_percent", json::array());
  for (const json& core : cores) record.core_percent_mean += core.get<double>() / static_cast<double>(cores.size());
  record.rss_bytes_mean = mean_and_max(r.value("rss_bytes", json())).first;
  record.peak_rss_bytes = r.value("peak_rss_bytes", 0.0);
  if (r.contains("transport_bytes")) {
    record.bytes_sent = r["transport_bytes"].value("sent", 0.0);
    record.bytes_received = r["transport_bytes"].value("received", 0.0);
  }
  const json s = r.value("series", json::object());
  record.seconds = series(s.value("seconds", json()));
  record.cpu_percent = series(s.value("cpu_percent", json()));
  record.rss_bytes = series(s.value("rss_bytes", json()));
  if (r.contains("gpu")) {
    const json& gpu = r["gpu"];
    record.gpu_available = gpu.value("available", false);
    record.gpu_reason = gpu.value("reason", std::string());
    for (const json& d : gpu.value("devices", json::array())) record.gpus.push_back(gpu_device(d));
  }
  return record;
}

}  // namespace

std::optional<ResourceRecord> resource_record(const json& report, int rank, const std::filesystem::path& file) {
  if (!report.is_object() || !report.contains("resources")) return std::nullopt;
  try {
    return parse(report["resources"], rank);
  } catch (const json::exception& error) {
    fail_input("{}: key 'resources' is malformed: {}", file.string(), error.what());
  }
}

}  // namespace dtbench
