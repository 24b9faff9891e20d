#pragma once
// A background thread that samples the process's resource use for the life of a run: CPU time of
// the process (as a percentage of one core, so 4 busy threads read 400), utilisation of every core
// of the machine, and resident memory (VmRSS) with its peak (VmHWM). Everything comes from /proc,
// so it is Linux only; elsewhere the readings are absent and summary() reports no samples.
//
// GPU counters are not sampled: NVML is not available on the machines this runs on. When a GPU is
// present, NVML utilisation and memory readings would be added to sample() beside the /proc ones.
//
// The series is kept in memory for a chart: at most max_samples points; when full, every other
// point is dropped and from then on only every second sample is kept (and so on, doubling), so a
// long run keeps an even, coarser series. Means and maxima cover every sample, not just those kept.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtbench {

// One core's counters from a /proc/stat "cpuN" line, in clock ticks.
struct CoreTicks {
  uint64_t busy_ticks = 0;
  uint64_t total_ticks = 0;
};

// Parsers for /proc text, exposed for tests. Each returns nothing (or an empty list) on text it
// cannot read.
std::optional<uint64_t> parse_process_cpu_ticks(std::string_view proc_self_stat);  // utime + stime
std::vector<CoreTicks> parse_core_ticks(std::string_view proc_stat);                // cpu0, cpu1, ...
std::optional<int64_t> parse_status_bytes(std::string_view proc_self_status, std::string_view key);  // "VmRSS"

class ResourceSampler {
 public:
  explicit ResourceSampler(std::chrono::milliseconds interval = std::chrono::seconds(1),
                           size_t max_samples = 3600);
  ~ResourceSampler();
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  // Takes a last sample (when the last interval was long enough to mean something) and joins the
  // thread; returns at once, without waiting out the interval. Called by the destructor; idempotent.
  void stop();

  // interval_seconds, samples, cpu_percent {mean, max}, per_core_percent (mean per core),
  // rss_bytes {mean, max}, peak_rss_bytes and series {seconds, cpu_percent, rss_bytes}.
  // Safe to call while the thread runs.
  nlohmann::json summary() const;

 private:
  struct Reading {
    std::chrono::steady_clock::time_point time;
    std::optional<uint64_t> process_ticks;
    std::vector<CoreTicks> cores;
    std::optional<int64_t> rss_bytes;
    std::optional<int64_t> peak_rss_bytes;
  };
  static Reading read_now();
  void run();
  void sample();                    // reads /proc and records the change since the previous reading
  void record(const Reading& now);  // under mutex_

  const std::chrono::milliseconds interval_;
  const size_t max_samples_;
  const std::chrono::steady_clock::time_point start_;
  const double ticks_per_second_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  Reading previous_;

  // Over every sample.
  int64_t samples_ = 0;
  double cpu_percent_sum_ = 0.0, cpu_percent_max_ = 0.0;
  double rss_bytes_sum_ = 0.0;
  int64_t rss_samples_ = 0, rss_bytes_max_ = 0, peak_rss_bytes_ = 0;
  std::vector<double> core_percent_sums_;
  std::vector<int64_t> core_samples_;
  // The kept series: one point every keep_every_ samples.
  int64_t keep_every_ = 1;
  std::vector<double> series_seconds_, series_cpu_percent_;
  std::vector<int64_t> series_rss_bytes_;

  std::thread thread_;  // started at the end of the constructor, once everything above is ready
};

}  // namespace dtbench
