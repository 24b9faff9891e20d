#pragma once
// launch/monitor — what a run observes of its machine: the resource sampler (/proc CPU, memory,
// network; NVML for GPUs, opened at run time), the /proc parsers and the run's provenance (host,
// CPU, BLAS core, MPI, commit). The lowest room of launch/.
// May include: core only.
// A background thread that samples the process's resource use for the life of a run: CPU time of
// the process (as a percentage of one core, so 4 busy threads read 400), utilisation of every core
// of the machine, and resident memory (VmRSS) with its peak (VmHWM), from /proc (Linux only;
// elsewhere the means leave them out and the series read 0); and, where NVML finds a GPU, each
// GPU's utilisation, memory and power (gpu_sampler.h). The transport's byte counts are handed in
// by the training loop, which learns them from each step's comm split; the summary reports them
// beside the rest.
//
// The series is kept in memory for a chart: at most max_samples points; when full, every other
// point is dropped and from then on only every second sample is kept (and so on, doubling), so a
// long run keeps an even, coarser series. Means and maxima cover every sample, not just those kept.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/monitor/gpu_sampler.h"
#include "launch/monitor/gpu_usage.h"
#include "launch/monitor/proc_parsers.h"

namespace dtbench {

struct ResourceSamplerOptions {
  std::chrono::milliseconds interval = std::chrono::seconds(1);
  size_t max_samples = 3600;
  std::string nvml_library = kNvmlLibrary;  // tests point this at a stand-in, or at nothing
};

class ResourceSampler {
 public:
  explicit ResourceSampler(ResourceSamplerOptions options = {});
  ~ResourceSampler();
  ResourceSampler(const ResourceSampler&) = delete;
  ResourceSampler& operator=(const ResourceSampler&) = delete;

  // Takes a last sample (when the last interval was long enough to mean something) and joins the
  // thread; returns at once, without waiting out the interval. Called by the destructor; idempotent.
  void stop();

  // A process whose CPU time and memory count as this worker's own: the PyTorch engine's worker
  // (engines/pytorch/torch_worker.h), which trains in this process's place — else its cores would
  // read as another program keeping the machine busy.
  void count_as_own(pid_t pid) { helper_pid_ = pid; }

  // Adds to the bytes the transport sent and received (payload as the transport counts it).
  void add_transport_bytes(int64_t sent, int64_t received);

  // interval_seconds, samples, cpu_percent {mean, max}, per_core_percent (mean per core),
  // rss_bytes {mean, max}, peak_rss_bytes, transport_bytes {sent, received},
  // series {seconds, cpu_percent, rss_bytes}, and gpu: {available: false, reason} or
  // {available: true, devices: [...]} (GpuUsage::devices_json, series aligned with series.seconds).
  // Safe to call while the thread runs.
  nlohmann::json summary() const;

 private:
  struct Reading {
    std::chrono::steady_clock::time_point time;
    std::optional<uint64_t> process_ticks;
    std::vector<CoreTicks> cores;
    std::optional<int64_t> rss_bytes;
    std::optional<int64_t> peak_rss_bytes;
    std::vector<GpuReading> gpus;
  };
  Reading read_now() const;
  void run();
  void sample();                    // reads /proc and NVML and records the change since the previous reading
  void record(const Reading& now);  // under mutex_

  const std::chrono::milliseconds interval_;
  const size_t max_samples_;
  const std::chrono::steady_clock::time_point start_;
  const double ticks_per_second_;
  const GpuSampler gpu_;

  std::atomic<pid_t> helper_pid_{0};

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  Reading previous_;

  // Over every sample.
  int64_t samples_ = 0;
  double cpu_seconds_ = 0.0, cpu_window_seconds_ = 0.0;  // process CPU time over the windows it was read in
  double cpu_percent_max_ = 0.0;
  double rss_bytes_sum_ = 0.0;
  int64_t rss_samples_ = 0, rss_bytes_max_ = 0, peak_rss_bytes_ = 0;
  std::vector<double> core_percent_sums_;
  std::vector<int64_t> core_samples_;
  GpuUsage gpu_usage_;
  int64_t transport_bytes_sent_ = 0, transport_bytes_received_ = 0;
  // The kept series: one point every keep_every_ samples.
  int64_t keep_every_ = 1;
  std::vector<double> series_seconds_, series_cpu_percent_;
  std::vector<int64_t> series_rss_bytes_;

  std::thread thread_;  // started at the end of the constructor, once everything above is ready
};

}  // namespace dtbench
