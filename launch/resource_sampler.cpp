#include "launch/resource_sampler.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

// A final sample on stop only when the last interval is at least this long: a shorter window is
// mostly clock-tick rounding (the kernel counts CPU time in ticks of usually 10 ms).
constexpr auto kShortestFinalWindow = std::chrono::milliseconds(20);

std::string read_text(const char* path) {
  std::ifstream file(path);
  if (!file) return {};
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::optional<uint64_t> to_u64(std::string_view word) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc{} || end != word.data() + word.size()) return std::nullopt;
  return value;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t at = 0;
  while (at < line.size()) {
    const size_t begin = line.find_first_not_of(" \t", at);
    if (begin == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t", begin);
    if (end == std::string_view::npos) end = line.size();
    words.push_back(line.substr(begin, end - begin));
    at = end;
  }
  return words;
}

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

}  // namespace

// /proc/self/stat: "pid (comm) state ppid ..." where comm may hold spaces and parentheses, so the
// fields are counted from the last ')'. utime and stime are fields 14 and 15 (1-based), that is
// the 12th and 13th after the ')'.
std::optional<uint64_t> parse_process_cpu_ticks(std::string_view proc_self_stat) {
  const size_t close = proc_self_stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const auto words = split_words(proc_self_stat.substr(close + 1));
  if (words.size() < 13) return std::nullopt;
  const auto utime = to_u64(words[11]), stime = to_u64(words[12]);
  if (!utime || !stime) return std::nullopt;
  return *utime + *stime;
}

// /proc/stat: "cpuN user nice system idle iowait irq softirq steal guest guest_nice". Guest time is
// already inside user and nice, so the total is the first eight; idle and iowait are not busy.
std::vector<CoreTicks> parse_core_ticks(std::string_view proc_stat) {
  std::vector<CoreTicks> cores;
  size_t at = 0;
  while (at < proc_stat.size()) {
    size_t end = proc_stat.find('\n', at);
    if (end == std::string_view::npos) end = proc_stat.size();
    const std::string_view line = proc_stat.substr(at, end - at);
    at = end + 1;
    // "cpu " is the whole machine; "cpu0", "cpu1", ... are the cores.
    if (line.size() < 4 || !line.starts_with("cpu") || line[3] < '0' || line[3] > '9') continue;
    const auto words = split_words(line);
    if (words.size() < 5) return {};
    uint64_t fields[8] = {};
    for (size_t i = 0; i < 8 && i + 1 < words.size(); ++i) {
      const auto value = to_u64(words[i + 1]);
      if (!value) return {};
      fields[i] = *value;
    }
    CoreTicks core;
    for (uint64_t value : fields) core.total_ticks += value;
    core.busy_ticks = core.total_ticks - fields[3] - fields[4];
    cores.push_back(core);
  }
  return cores;
}

// /proc/self/status: "VmRSS:\t  123456 kB".
std::optional<int64_t> parse_status_bytes(std::string_view proc_self_status, std::string_view key) {
  size_t at = 0;
  while (at < proc_self_status.size()) {
    size_t end = proc_self_status.find('\n', at);
    if (end == std::string_view::npos) end = proc_self_status.size();
    const std::string_view line = proc_self_status.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ':') continue;
    const auto words = split_words(line.substr(key.size() + 1));
    if (words.size() != 2 || words[1] != "kB") return std::nullopt;
    const auto kib = to_u64(words[0]);
    if (!kib) return std::nullopt;
    return static_cast<int64_t>(*kib) * 1024;
  }
  return std::nullopt;
}

ResourceSampler::ResourceSampler(std::chrono::milliseconds interval, size_t max_samples)
    : interval_(std::max(interval, std::chrono::milliseconds(1))),
      max_samples_(std::max<size_t>(max_samples, 2)),
      start_(Clock::now()),
      ticks_per_second_(static_cast<double>(sysconf(_SC_CLK_TCK))),
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

ResourceSampler::Reading ResourceSampler::read_now() {
  Reading reading;
  reading.time = Clock::now();
  reading.process_ticks = parse_process_cpu_ticks(read_text("/proc/self/stat"));
  reading.cores = parse_core_ticks(read_text("/proc/stat"));
  const std::string status = read_text("/proc/self/status");
  reading.rss_bytes = parse_status_bytes(status, "VmRSS");
  reading.peak_rss_bytes = parse_status_bytes(status, "VmHWM");
  return reading;
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

  double cpu_percent = 0.0;
  if (now.process_ticks && previous_.process_ticks && ticks_per_second_ > 0) {
    const double cpu_seconds = static_cast<double>(*now.process_ticks - *previous_.process_ticks) / ticks_per_second_;
    cpu_percent = percent(cpu_seconds, window_seconds);
  }
  cpu_percent_sum_ += cpu_percent;
  cpu_percent_max_ = std::max(cpu_percent_max_, cpu_percent);

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

  if ((samples_ - 1) % keep_every_ != 0) return;
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
  keep_every_ *= 2;
}

nlohmann::json ResourceSampler::summary() const {
  std::lock_guard lock(mutex_);
  const double samples = static_cast<double>(samples_);
  nlohmann::json per_core = nlohmann::json::array();
  for (size_t core = 0; core < core_percent_sums_.size(); ++core) {
    per_core.push_back(core_samples_[core] > 0 ? core_percent_sums_[core] / static_cast<double>(core_samples_[core])
                                               : 0.0);
  }
  return {
      {"interval_seconds", std::chrono::duration<double>(interval_).count()},
      {"samples", samples_},
      {"cpu_percent", {{"mean", samples_ > 0 ? cpu_percent_sum_ / samples : 0.0}, {"max", cpu_percent_max_}}},
      {"per_core_percent", per_core},
      {"rss_bytes",
       {{"mean", rss_samples_ > 0 ? rss_bytes_sum_ / static_cast<double>(rss_samples_) : 0.0},
        {"max", rss_bytes_max_}}},
      {"peak_rss_bytes", peak_rss_bytes_},
      {"series",
       {{"seconds", series_seconds_}, {"cpu_percent", series_cpu_percent_}, {"rss_bytes", series_rss_bytes_}}},
  };
}

}  // namespace dtbench
