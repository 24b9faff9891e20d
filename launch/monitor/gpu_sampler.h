#pragma once
// GPU utilisation, memory and power through NVML, the library nvidia-smi reads them with. NVML
// ships with the driver as libnvidia-ml.so.1 and Debian main has no package with its header, so it
// is not a build dependency: the library is opened at run time (dlopen) and the handful of
// functions used are declared in gpu_sampler.cpp after NVML's documented signatures. On a machine
// without the library, or without a GPU, the sampler says why and reads nothing.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dtbench {

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

// One GPU at one moment. A counter the device does not report (power on some boards) is absent.
struct GpuReading {
  std::optional<double> utilisation_percent;  // time a kernel ran, over NVML's last sample period
  std::optional<int64_t> memory_used_bytes;
  std::optional<int64_t> memory_total_bytes;
  std::optional<double> power_watts;
};

class GpuSampler {
 public:
  // Opens `library` and initialises NVML. Never throws: when either fails, or no GPU is found,
  // available() is false and unavailable_reason() says why.
  explicit GpuSampler(const std::string& library = kNvmlLibrary);
  ~GpuSampler();  // shuts NVML down and closes the library
  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

  bool available() const { return !devices_.empty(); }
  const std::string& unavailable_reason() const { return reason_; }
  // NVML's name of each device ("NVIDIA H100 80GB HBM3"), in index order.
  const std::vector<std::string>& device_names() const { return names_; }

  // One reading per device, in index order; empty when not available. Safe from any thread (NVML
  // is thread-safe).
  std::vector<GpuReading> read() const;

 private:
  struct Nvml;  // the library's handle and function pointers
  bool open(const std::string& library);
  bool find_devices();

  std::unique_ptr<Nvml> nvml_;
  std::vector<void*> devices_;  // NVML's opaque device handles
  std::vector<std::string> names_;
  std::string reason_;
};

}  // namespace dtbench
