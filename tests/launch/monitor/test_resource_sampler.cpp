#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "launch/monitor/resource_sampler.h"

namespace dtbench {
namespace {

using namespace std::chrono_literals;

// Keeps one core busy for the given wall time.
void burn_cpu(std::chrono::milliseconds duration) {
  volatile double sink = 0.0;
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 10000; ++i) sink = sink + i * 0.5;
  }
}

TEST(ResourceSampler, ParsesProcText) {
  // comm with a space and a ')' inside; utime 250, stime 50.
  const char* stat = "1234 (my (odd) name) R 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 3 0 99 1000 200";
  EXPECT_EQ(parse_process_cpu_ticks(stat), 300u);
  EXPECT_FALSE(parse_process_cpu_ticks("1234 (x) R 1 2").has_value());
  EXPECT_EQ(parse_process_start_ticks(stat), 99u);  // field 22: starttime
  EXPECT_FALSE(parse_process_start_ticks("1234 (x) R 1 2").has_value());
  // cutime 7, cstime 5: the children this process has waited for.
  EXPECT_EQ(parse_children_cpu_ticks("1 (a) R 1 1 1 0 -1 0 0 0 0 0 250 50 7 5 20 0 3 0 99"), 12u);
  EXPECT_FALSE(parse_children_cpu_ticks("1234 (x) R 1 2").has_value());
  // This process: started before this line, and not long ago (to the 0.01 s of /proc).
  const auto age = process_age_seconds();
  ASSERT_TRUE(age.has_value());
  EXPECT_GE(*age, 0.0);
  EXPECT_LT(*age, 600.0);

  const char* proc_stat =
      "cpu  30 0 10 160 0 0 0 0 0 0\n"
      "cpu0 10 0 5 80 5 0 0 0 0 0\n"
      "cpu1 20 0 5 80 0 0 0 0 7 0\n"
      "intr 12345\n";
  const auto cores = parse_core_ticks(proc_stat);
  ASSERT_EQ(cores.size(), 2u);
  EXPECT_EQ(cores[0].total_ticks, 100u);
  EXPECT_EQ(cores[0].busy_ticks, 15u);  // idle and iowait are not busy
  EXPECT_EQ(cores[1].total_ticks, 105u);  // guest (7) is not counted twice
  EXPECT_EQ(cores[1].busy_ticks, 25u);
  // A core line that cannot be read makes the whole reading unusable, not a core short.
  EXPECT_TRUE(parse_core_ticks("cpu0 10 0 5 80\ncpu1 10 x 5 80\n").empty());
  EXPECT_TRUE(parse_core_ticks("cpu0 10 0 5\n").empty());

  const char* status = "Name:\tdtbench\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\n";
  EXPECT_EQ(parse_status_bytes(status, "VmRSS"), 1024 * 1024);
  EXPECT_EQ(parse_status_bytes(status, "VmHWM"), 2048 * 1024);
  EXPECT_FALSE(parse_status_bytes(status, "VmSwap").has_value());
  EXPECT_FALSE(parse_status_bytes("VmRSS:\t 1024 MB\n", "VmRSS").has_value());  // only kB is known
  EXPECT_FALSE(parse_status_bytes("VmRSSx:\t 1024 kB\n", "VmRSS").has_value());
}

constexpr const char* kNoNvml = "/nonexistent/libnvidia-ml.so.1";

TEST(ResourceSampler, SeesABusyLoopAndStopsAtOnce) {
  // No NVML here (its start-up can take seconds on a GPU host): this test times the sampler alone.
  auto sampler = std::make_unique<ResourceSampler>(ResourceSamplerOptions{.interval = 20ms, .nvml_library = kNoNvml});
  burn_cpu(300ms);
  const auto running = sampler->summary();  // while the thread runs
  EXPECT_GE(running["samples"].get<int64_t>(), 5);

  const auto stop_begin = std::chrono::steady_clock::now();
  sampler->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_begin, 100ms);

  const auto summary = sampler->summary();
  const int64_t samples = summary["samples"].get<int64_t>();
  EXPECT_GE(samples, 5);
  EXPECT_DOUBLE_EQ(summary["interval_seconds"].get<double>(), 0.02);
  EXPECT_GT(summary["cpu_percent"]["max"].get<double>(), 50.0);
  EXPECT_GT(summary["cpu_percent"]["mean"].get<double>(), 0.0);
  EXPECT_GT(summary["rss_bytes"]["max"].get<int64_t>(), 0);
  EXPECT_GT(summary["rss_bytes"]["mean"].get<double>(), 0.0);
  EXPECT_GE(summary["peak_rss_bytes"].get<int64_t>(), summary["rss_bytes"]["max"].get<int64_t>());
  EXPECT_EQ(summary["per_core_percent"].size(), std::thread::hardware_concurrency());
  // Every sample is a point of the series, but the last when stop() cut its window under half an
  // interval (record(): such a window is mostly clock-tick rounding).
  for (const auto& key : {"seconds", "cpu_percent", "rss_bytes"}) {
    EXPECT_LE(summary["series"][key].size(), static_cast<size_t>(samples)) << key;
    EXPECT_GE(summary["series"][key].size(), static_cast<size_t>(samples - 1)) << key;
  }
  EXPECT_EQ(summary["transport_bytes"]["sent"], 0);
  EXPECT_EQ(summary["transport_bytes"]["received"], 0);
  EXPECT_TRUE(summary["gpu"].contains("available"));
  sampler.reset();  // a second stop, from the destructor, is harmless
}

// A helper process that trains in this one's place (the PyTorch engine's worker) counts as this
// process: its CPU while it runs, and after it has ended and been waited for, without a jump. This
// process itself only sleeps, so all the CPU seen is the helper's half second of spinning.
TEST(ResourceSampler, AHelperProcessCountsAsThisOnesOwn) {
  ResourceSampler sampler(ResourceSamplerOptions{.interval = 50ms, .nvml_library = kNoNvml});
  const pid_t helper = fork();
  ASSERT_GE(helper, 0);
  if (helper == 0) {
    const auto end = std::chrono::steady_clock::now() + 500ms;
    volatile uint64_t spin = 0;
    while (std::chrono::steady_clock::now() < end) spin = spin + 1;
    _exit(0);
  }
  sampler.count_as_own(helper);
  waitpid(helper, nullptr, 0);
  std::this_thread::sleep_for(200ms);
  sampler.stop();
  const auto summary = sampler.summary();
  EXPECT_GT(summary["cpu_percent"]["max"].get<double>(), 60.0) << summary["series"];
}

// A quiet first interval, then a busy final window too short to set the maximum: it must not be
// drawn above the maximum either (a report once showed a 60 % point over a 40 % maximum).
TEST(ResourceSampler, NoPointOfTheSeriesExceedsTheMaximum) {
  ResourceSampler sampler({.interval = 300ms, .nvml_library = kNoNvml});
  std::this_thread::sleep_for(320ms);
  burn_cpu(100ms);
  sampler.stop();
  const auto summary = sampler.summary();
  const double max = summary["cpu_percent"]["max"].get<double>();
  ASSERT_GE(summary["series"]["cpu_percent"].size(), 1u);
  for (const auto& point : summary["series"]["cpu_percent"]) EXPECT_LE(point.get<double>(), max);
}

TEST(ResourceSampler, DestructionDoesNotWaitOutTheInterval) {
  const auto begin = std::chrono::steady_clock::now();
  { ResourceSampler sampler({.interval = 10s, .nvml_library = kNoNvml}); }
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 100ms);
}

TEST(ResourceSampler, AddsUpTheTransportBytesItIsGiven) {
  ResourceSampler sampler({.interval = 10s});
  sampler.add_transport_bytes(1000, 2000);
  sampler.add_transport_bytes(24, 48);
  const auto bytes = sampler.summary()["transport_bytes"];
  EXPECT_EQ(bytes["sent"].get<int64_t>(), 1024);
  EXPECT_EQ(bytes["received"].get<int64_t>(), 2048);
}

TEST(ResourceSampler, KeepsTheSeriesBounded) {
  ResourceSampler sampler({.interval = 1ms, .max_samples = 8});
  std::this_thread::sleep_for(150ms);
  sampler.stop();
  const auto summary = sampler.summary();
  const auto& seconds = summary["series"]["seconds"];
  EXPECT_GT(summary["samples"].get<int64_t>(), 8);
  EXPECT_LT(seconds.size(), 8u);
  EXPECT_GE(seconds.size(), 2u);
  for (size_t i = 1; i < seconds.size(); ++i) EXPECT_GT(seconds[i].get<double>(), seconds[i - 1].get<double>());
}

}  // namespace
}  // namespace dtbench
