// The GPU sampler without a GPU: an absent or unusable NVML is reported with its reason, and a
// stand-in NVML (fake_nvml.cpp, built beside this test) checks the calls, the struct layouts and
// the plumbing into the resource sampler's summary and from there into the report's charts.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "launch/monitor/gpu_sampler.h"
#include "launch/report/charts.h"
#include "launch/report/resources.h"
#include "launch/monitor/resource_sampler.h"

namespace dtbench {
namespace {

using namespace std::chrono_literals;

constexpr const char* kMissingLibrary = "/nonexistent/libnvidia-ml.so.1";

// Sets an environment variable for the life of a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(GpuSampler, AMissingLibraryIsReportedNotThrown) {
  const GpuSampler gpu(kMissingLibrary);
  EXPECT_FALSE(gpu.available());
  EXPECT_NE(gpu.unavailable_reason().find("NVML not loaded"), std::string::npos) << gpu.unavailable_reason();
  EXPECT_NE(gpu.unavailable_reason().find(kMissingLibrary), std::string::npos) << gpu.unavailable_reason();
  EXPECT_TRUE(gpu.read().empty());
}

TEST(GpuSampler, ALibraryWithoutNvmlIsReported) {
  const GpuSampler gpu("libm.so.6");
  EXPECT_FALSE(gpu.available());
  EXPECT_NE(gpu.unavailable_reason().find("lacks an NVML function"), std::string::npos) << gpu.unavailable_reason();
}

TEST(GpuSampler, AFailedInitOrNoDeviceIsReported) {
  {
    const ScopedEnv env("FAKE_NVML_INIT_ERROR", "9");
    const GpuSampler gpu(FAKE_NVML_LIBRARY);
    EXPECT_FALSE(gpu.available());
    EXPECT_EQ(gpu.unavailable_reason(), "nvmlInit failed: Driver Not Loaded (NVML error 9)");
  }
  const ScopedEnv env("FAKE_NVML_DEVICES", "0");
  const GpuSampler gpu(FAKE_NVML_LIBRARY);
  EXPECT_FALSE(gpu.available());
  EXPECT_EQ(gpu.unavailable_reason(), "NVML found no GPU");
}

TEST(GpuSampler, ReadsUtilisationMemoryAndPowerOfEveryDevice) {
  const GpuSampler gpu(FAKE_NVML_LIBRARY);
  ASSERT_TRUE(gpu.available()) << gpu.unavailable_reason();
  EXPECT_EQ(gpu.device_names(), (std::vector<std::string>{"Fake GPU 0", "Fake GPU 1"}));
  const auto readings = gpu.read();
  ASSERT_EQ(readings.size(), 2u);
  EXPECT_EQ(readings[0].utilisation_percent, 37.0);
  EXPECT_EQ(readings[0].memory_used_bytes, int64_t{1} << 30);
  EXPECT_EQ(readings[0].memory_total_bytes, int64_t{8} << 30);
  EXPECT_DOUBLE_EQ(readings[0].power_watts.value_or(0), 123.456);  // from milliwatts
  EXPECT_EQ(readings[1].utilisation_percent, 38.0);
  EXPECT_EQ(readings[1].memory_used_bytes, int64_t{2} << 30);
  EXPECT_FALSE(readings[1].power_watts.has_value());  // not supported by that device
}

TEST(GpuSampler, WithoutNvmlTheSummarySaysWhy) {
  ResourceSampler sampler({.interval = 10s, .nvml_library = kMissingLibrary});
  const auto gpu = sampler.summary()["gpu"];
  EXPECT_FALSE(gpu["available"].get<bool>());
  EXPECT_NE(gpu["reason"].get<std::string>().find("NVML not loaded"), std::string::npos) << gpu.dump();
  EXPECT_FALSE(gpu.contains("devices"));
}

TEST(GpuSampler, TheSummaryHoldsEachDeviceWithASeriesAlignedToTheSeconds) {
  ResourceSampler sampler({.interval = 5ms, .nvml_library = FAKE_NVML_LIBRARY});
  std::this_thread::sleep_for(60ms);
  sampler.stop();
  const auto summary = sampler.summary();
  const auto& gpu = summary["gpu"];
  ASSERT_TRUE(gpu["available"].get<bool>()) << gpu.dump();
  ASSERT_EQ(gpu["devices"].size(), 2u);
  const size_t points = summary["series"]["seconds"].size();
  EXPECT_GE(points, 2u);
  for (const auto& device : gpu["devices"]) {
    for (const auto& key : {"utilisation_percent", "memory_used_bytes", "power_watts"}) {
      EXPECT_EQ(device["series"][key].size(), points) << key;
    }
  }
  const auto& first = gpu["devices"][0];
  EXPECT_EQ(first["name"], "Fake GPU 0");
  EXPECT_DOUBLE_EQ(first["utilisation_percent"]["mean"].get<double>(), 37.0);
  EXPECT_DOUBLE_EQ(first["power_watts"]["max"].get<double>(), 123.456);
  EXPECT_EQ(first["memory_total_bytes"].get<int64_t>(), int64_t{8} << 30);
  const auto& second = gpu["devices"][1];
  EXPECT_TRUE(second["power_watts"].is_null());
  EXPECT_TRUE(second["series"]["power_watts"][0].is_null());
  EXPECT_DOUBLE_EQ(second["series"]["memory_used_bytes"][0].get<double>(), double(int64_t{2} << 30));
}

TEST(GpuSampler, TheReportReadsTheDevicesBackAndChartsThem) {
  ResourceSampler sampler({.interval = 5ms, .nvml_library = FAKE_NVML_LIBRARY});
  std::this_thread::sleep_for(30ms);
  sampler.stop();
  const nlohmann::json report = {{"resources", sampler.summary()}};
  const auto record = resource_record(report, 3, "worker-3.json");
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->rank, 3);
  EXPECT_TRUE(record->gpu_available);
  ASSERT_EQ(record->gpus.size(), 2u);
  EXPECT_EQ(record->gpus[0].name, "Fake GPU 0");
  EXPECT_DOUBLE_EQ(record->gpus[1].utilisation_percent_mean, 38.0);
  ASSERT_EQ(record->gpus[1].power_watts.size(), record->seconds.size());
  EXPECT_TRUE(std::isnan(record->gpus[1].power_watts[0]));  // null in the report: no reading

  RunRecord run;
  run.resources = {*record};
  const auto charts = resource_charts(run, "");
  ASSERT_EQ(charts.size(), 4u);  // CPU, memory, GPU utilisation, GPU memory
  EXPECT_NE(charts[2].find(">GPU utilisation</text>"), std::string::npos);
  EXPECT_NE(charts[3].find(">rank 3 GPU 1</text>"), std::string::npos);

  run.resources[0].gpus.clear();  // no GPU: CPU and memory only
  EXPECT_EQ(resource_charts(run, "").size(), 2u);
}

}  // namespace
}  // namespace dtbench
