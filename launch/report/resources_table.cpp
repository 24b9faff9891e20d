// The resources table, for one run or several: what each worker's sampler saw.
#include <set>

#include <fmt/format.h>

#include "launch/report/format.h"
#include "launch/report/tables.h"

namespace dtbench {

namespace {

// "37% / 1.2 GiB / 250 W" for each device, devices separated by "; ".
std::string gpu_cell(const ResourceRecord& r) {
  std::vector<std::string> devices;
  for (const auto& gpu : r.gpus) {
    devices.push_back(fmt::format("{:.0f}% / {} / {:.0f} W", gpu.utilisation_percent_mean,
                                  bytes_text(gpu.memory_used_bytes_max), gpu.power_watts_mean));
  }
  return devices.empty() ? "-" : fmt::format("{}", fmt::join(devices, "; "));
}

}  // namespace

ReportTable resources_table(const std::vector<RunRecord>& runs) {
  bool any_gpu = false;
  std::set<std::string> gpu_reasons;
  for (const auto& run : runs) {
    for (const auto& r : run.resources) {
      any_gpu = any_gpu || r.gpu_available;
      if (!r.gpu_available && !r.gpu_reason.empty()) gpu_reasons.insert(r.gpu_reason);
    }
  }
  ReportTable table = titled_table("Resources per worker (sampled once a second)",
                                   {"worker", "samples", "CPU mean", "CPU max", "machine cores busy", "RSS mean",
                                    "RSS peak", "transport sent", "transport received"});
  if (runs.size() > 1) table.header.insert(table.header.begin(), "run");
  if (any_gpu) table.header.push_back("GPU util / memory max / power");
  for (const auto& run : runs) {
    for (const auto& r : run.resources) {
      std::vector<std::string> row = {fmt::format("rank {}", r.rank), std::to_string(r.samples),
                                      fmt::format("{:.0f}%", r.cpu_percent_mean),
                                      fmt::format("{:.0f}%", r.cpu_percent_max),
                                      fmt::format("{:.0f}%", r.core_percent_mean), bytes_text(r.rss_bytes_mean),
                                      bytes_text(r.peak_rss_bytes),
                                      r.bytes_sent ? bytes_text(*r.bytes_sent) : "-",
                                      r.bytes_received ? bytes_text(*r.bytes_received) : "-"};
      if (runs.size() > 1) row.insert(row.begin(), run.name);
      if (any_gpu) row.push_back(gpu_cell(r));
      table.rows.push_back(row);
    }
  }
  table.note = "CPU is the process's, in percent of one core (4 busy threads read 400%); machine cores busy is "
               "the mean over every core of the host";
  for (const auto& reason : gpu_reasons) table.note += "; GPU not sampled: " + reason;
  return table;
}

}  // namespace dtbench
