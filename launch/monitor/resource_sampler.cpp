#include "launch/monitor/resource_sampler.h"

#include <unistd.h>

#include <algorithm>
#include <string>

#include <fmt/format.h>

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

// A final sample on stop only when the last interval is at least this long: a shorter window is
// mostly clock-tick rounding (the kernel counts CPU time in ticks of usually 10 ms).
constexpr auto kShortestFinalWindow = std::chrono::milliseconds(20);

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

}  // namespace

ResourceSampler::ResourceSampler(ResourceSamplerOptions options)
    : interval_(std::max(options.interval, std::chrono::milliseconds(1))),
      max_samples_(std::max<size_t>(options.max_samples, 2)),
      start_(Clock::now()),
      ticks_per_second_(static_cast<double>(sysconf(_SC_CLK_TCK))),
      gpu_(options.nvml_library),
      previous_(read_now()) {
  peak_rss_bytes_ = previous_.peak_rss_bytes.value_or(0);
  thread_ = std::thread([this] { run(); });
}

ResourceSampler::~ResourceSampler() { stop(); }

void ResourceSampler::stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

ResourceSampler::Reading ResourceSampler::read_now() const {
  Reading reading;
  reading.time = Clock::now();
  const std::string stat = read_proc_text("/proc/self/stat");
  reading.process_ticks = parse_process_cpu_ticks(stat);
  reading.cores = parse_core_ticks(read_proc_text("/proc/stat"));
  const std::string status = read_proc_text("/proc/self/status");
  reading.rss_bytes = parse_status_bytes(status, "VmRSS");
  reading.peak_rss_bytes = parse_status_bytes(status, "VmHWM");
  if (const pid_t helper = helper_pid_.load(); helper > 0 && reading.process_ticks) {
    // The helper's CPU time while it runs; once it has ended and been waited for, the kernel counts
    // it among this process's children's, so the sum goes on without a jump.
    const std::string proc = fmt::format("/proc/{}/", helper);
    *reading.process_ticks += parse_children_cpu_ticks(stat).value_or(0) +
                              parse_process_cpu_ticks(read_proc_text((proc + "stat").c_str())).value_or(0);
    if (reading.rss_bytes) {
      *reading.rss_bytes += parse_status_bytes(read_proc_text((proc + "status").c_str()), "VmRSS").value_or(0);
    }
  }
  reading.gpus = gpu_.read();
  return reading;
}

void ResourceSampler::add_transport_bytes(int64_t sent, int64_t received) {
  std::lock_guard lock(mutex_);
  transport_bytes_sent_ += sent;
  transport_bytes_received_ += received;
}

void ResourceSampler::run() {
  auto next = start_ + interval_;
  std::unique_lock lock(mutex_);
  // wait_until returns as soon as stop() notifies, so stopping never waits out an interval.
  while (!wake_.wait_until(lock, next, [this] { return stopping_; })) {
    lock.unlock();
    sample();
    lock.lock();
    next += interval_;
    // After a stall (a suspended process, a slow /proc read) skip the missed ticks, don't burst.
    if (const auto now = Clock::now(); next < now) next = now + interval_;
  }
  lock.unlock();
  if (Clock::now() - previous_.time >= kShortestFinalWindow) sample();
}

void ResourceSampler::sample() {
  const Reading now = read_now();  // outside the lock: summary() is not held up by /proc reads
  std::lock_guard lock(mutex_);
  record(now);
  previous_ = now;
}

void ResourceSampler::record(const Reading& now) {
  const double window_seconds = std::chrono::duration<double>(now.time - previous_.time).count();
  if (window_seconds <= 0) return;
  ++samples_;

  // The mean is CPU time over wall time, so a short window (the last, or one cut by a stall)
  // weighs by its length; but a window under half an interval is mostly clock-tick rounding (it
  // can read 150% for one busy thread), so it neither sets the maximum nor becomes a point of the
  // series: every point shown then lies within the reported maximum.
  const bool long_window = window_seconds >= 0.5 * std::chrono::duration<double>(interval_).count();
  double cpu_percent = 0.0;
  if (now.process_ticks && previous_.process_ticks && ticks_per_second_ > 0) {
    const double cpu_seconds = static_cast<double>(*now.process_ticks - *previous_.process_ticks) / ticks_per_second_;
    cpu_percent = percent(cpu_seconds, window_seconds);
    cpu_seconds_ += cpu_seconds;
    cpu_window_seconds_ += window_seconds;
    if (long_window) cpu_percent_max_ = std::max(cpu_percent_max_, cpu_percent);
  }

  // Cores can come and go (hotplug); compare only when both readings list the same ones.
  if (now.cores.size() == previous_.cores.size()) {
    core_percent_sums_.resize(now.cores.size(), 0.0);
    core_samples_.resize(now.cores.size(), 0);
    for (size_t core = 0; core < now.cores.size(); ++core) {
      const uint64_t total = now.cores[core].total_ticks - previous_.cores[core].total_ticks;
      const uint64_t busy = now.cores[core].busy_ticks - previous_.cores[core].busy_ticks;
      if (total == 0 || busy > total) continue;
      core_percent_sums_[core] += percent(static_cast<double>(busy), static_cast<double>(total));
      ++core_samples_[core];
    }
  }

  const int64_t rss_bytes = now.rss_bytes.value_or(0);
  if (now.rss_bytes) {
    rss_bytes_sum_ += static_cast<double>(rss_bytes);
    ++rss_samples_;
    rss_bytes_max_ = std::max(rss_bytes_max_, rss_bytes);
  }
  peak_rss_bytes_ = std::max({peak_rss_bytes_, now.peak_rss_bytes.value_or(0), rss_bytes_max_});

  const bool keep = long_window && (samples_ - 1) % keep_every_ == 0;
  gpu_usage_.add(now.gpus, keep);
  if (!keep) return;
  series_seconds_.push_back(std::chrono::duration<double>(now.time - start_).count());
  series_cpu_percent_.push_back(cpu_percent);
  series_rss_bytes_.push_back(rss_bytes);
  if (series_seconds_.size() < max_samples_) return;
  // Full: keep the even points (samples 0, 2k, 4k, ... of every keep_every_) and halve the rate.
  auto keep_even = [](auto& series) {
    size_t kept = 0;
    for (size_t i = 0; i < series.size(); i += 2) series[kept++] = series[i];
    series.resize(kept);
  };
  keep_even(series_seconds_);
  keep_even(series_cpu_percent_);
  keep_even(series_rss_bytes_);
  gpu_usage_.halve_series();
  keep_every_ *= 2;
}

nlohmann::json ResourceSampler::summary() const {
  std::lock_guard lock(mutex_);
  const double cpu_mean = percent(cpu_seconds_, cpu_window_seconds_);
  nlohmann::json per_core = nlohmann::json::array();
  for (size_t core = 0; core < core_percent_sums_.size(); ++core) {
    per_core.push_back(core_samples_[core] > 0 ? core_percent_sums_[core] / static_cast<double>(core_samples_[core])
                                               : 0.0);
  }
  nlohmann::json gpu = {{"available", gpu_.available()}};
  if (gpu_.available()) {
    gpu["devices"] = gpu_usage_.devices_json(gpu_.device_names());
  } else {
    gpu["reason"] = gpu_.unavailable_reason();
  }
  return {
      {"interval_seconds", std::chrono::duration<double>(interval_).count()},
      {"samples", samples_},
      {"cpu_percent",
       {{"mean", cpu_mean}, {"max", std::max(cpu_percent_max_, cpu_mean)}}},  // a run of short windows only: its mean
      {"per_core_percent", per_core},
      {"rss_bytes",
       {{"mean", rss_samples_ > 0 ? rss_bytes_sum_ / static_cast<double>(rss_samples_) : 0.0},
        {"max", rss_bytes_max_}}},
      {"peak_rss_bytes", peak_rss_bytes_},
      {"transport_bytes", {{"sent", transport_bytes_sent_}, {"received", transport_bytes_received_}}},
      {"series",
       {{"seconds", series_seconds_}, {"cpu_percent", series_cpu_percent_}, {"rss_bytes", series_rss_bytes_}}},
      {"gpu", gpu},
  };
}

}  // namespace dtbench
