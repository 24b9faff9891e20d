#include "launch/monitor/gpu_sampler.h"

#include <dlfcn.h>

#include <fmt/format.h>

namespace dtbench {

namespace {

// From NVML's nvml.h (stable ABI since the _v2 entry points of CUDA 5.5): every call returns an
// nvmlReturn_t, 0 being success; a device is an opaque pointer; the structs below are laid out as
// documented for nvmlDeviceGetUtilizationRates and nvmlDeviceGetMemoryInfo.
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
using NvmlDevice = void*;
struct NvmlUtilization {
  unsigned int gpu;     // percent of the sample period a kernel was running
  unsigned int memory;  // percent of the period device memory was read or written
};
struct NvmlMemory {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
};
// NVML_DEVICE_NAME_V2_BUFFER_SIZE: the longest name nvmlDeviceGetName writes, with its terminator.
constexpr unsigned int kNameBufferBytes = 96;

template <typename Function>
Function symbol(void* library, const char* name) {
  return reinterpret_cast<Function>(dlsym(library, name));
}

}  // namespace

struct GpuSampler::Nvml {
  void* library = nullptr;
  bool initialised = false;
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*device_count)(unsigned int*) = nullptr;
  NvmlReturn (*device_by_index)(unsigned int, NvmlDevice*) = nullptr;
  NvmlReturn (*utilisation)(NvmlDevice, NvmlUtilization*) = nullptr;
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*power_milliwatts)(NvmlDevice, unsigned int*) = nullptr;
  // Optional: a clearer reason, a name for the report.
  const char* (*error_string)(NvmlReturn) = nullptr;
  NvmlReturn (*name)(NvmlDevice, char*, unsigned int) = nullptr;

  std::string describe(NvmlReturn code) const {
    return error_string != nullptr ? fmt::format("{} (NVML error {})", error_string(code), code)
                                   : fmt::format("NVML error {}", code);
  }

  ~Nvml() {
    if (initialised) shutdown();
    if (library != nullptr) dlclose(library);
  }
};

GpuSampler::GpuSampler(const std::string& library) : nvml_(std::make_unique<Nvml>()) {
  if (!open(library) || !find_devices()) {
    devices_.clear();
    names_.clear();
  }
}

GpuSampler::~GpuSampler() = default;

bool GpuSampler::open(const std::string& library) {
  Nvml& nvml = *nvml_;
  nvml.library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (nvml.library == nullptr) {
    const char* error = dlerror();
    reason_ = fmt::format("NVML not loaded: {}", error != nullptr ? error : library);
    return false;
  }
  nvml.init = symbol<decltype(nvml.init)>(nvml.library, "nvmlInit_v2");
  nvml.shutdown = symbol<decltype(nvml.shutdown)>(nvml.library, "nvmlShutdown");
  nvml.device_count = symbol<decltype(nvml.device_count)>(nvml.library, "nvmlDeviceGetCount_v2");
  nvml.device_by_index = symbol<decltype(nvml.device_by_index)>(nvml.library, "nvmlDeviceGetHandleByIndex_v2");
  nvml.utilisation = symbol<decltype(nvml.utilisation)>(nvml.library, "nvmlDeviceGetUtilizationRates");
  nvml.memory = symbol<decltype(nvml.memory)>(nvml.library, "nvmlDeviceGetMemoryInfo");
  nvml.power_milliwatts = symbol<decltype(nvml.power_milliwatts)>(nvml.library, "nvmlDeviceGetPowerUsage");
  nvml.error_string = symbol<decltype(nvml.error_string)>(nvml.library, "nvmlErrorString");
  nvml.name = symbol<decltype(nvml.name)>(nvml.library, "nvmlDeviceGetName");
  if (nvml.init == nullptr || nvml.shutdown == nullptr || nvml.device_count == nullptr ||
      nvml.device_by_index == nullptr || nvml.utilisation == nullptr || nvml.memory == nullptr ||
      nvml.power_milliwatts == nullptr) {
    reason_ = fmt::format("{} lacks an NVML function dtbench needs (too old a driver?)", library);
    return false;
  }
  if (const NvmlReturn code = nvml.init(); code != kNvmlSuccess) {
    reason_ = fmt::format("nvmlInit failed: {}", nvml.describe(code));
    return false;
  }
  nvml.initialised = true;
  return true;
}

bool GpuSampler::find_devices() {
  const Nvml& nvml = *nvml_;
  unsigned int count = 0;
  if (const NvmlReturn code = nvml.device_count(&count); code != kNvmlSuccess) {
    reason_ = fmt::format("nvmlDeviceGetCount failed: {}", nvml.describe(code));
    return false;
  }
  if (count == 0) {
    reason_ = "NVML found no GPU";
    return false;
  }
  for (unsigned int index = 0; index < count; ++index) {
    NvmlDevice device = nullptr;
    if (const NvmlReturn code = nvml.device_by_index(index, &device); code != kNvmlSuccess) {
      // One device this process may not see (a container's, say) leaves the others sampled.
      reason_ = fmt::format("nvmlDeviceGetHandleByIndex({}) failed: {}", index, nvml.describe(code));
      continue;
    }
    char name[kNameBufferBytes] = {};
    const bool named = nvml.name != nullptr && nvml.name(device, name, kNameBufferBytes) == kNvmlSuccess;
    devices_.push_back(device);
    names_.push_back(named ? std::string(name) : fmt::format("GPU {}", index));
  }
  return !devices_.empty();
}

std::vector<GpuReading> GpuSampler::read() const {
  const Nvml& nvml = *nvml_;
  std::vector<GpuReading> readings;
  for (void* device : devices_) {
    GpuReading reading;
    if (NvmlUtilization rates{}; nvml.utilisation(device, &rates) == kNvmlSuccess) {
      reading.utilisation_percent = rates.gpu;
    }
    if (NvmlMemory memory{}; nvml.memory(device, &memory) == kNvmlSuccess) {
      reading.memory_used_bytes = static_cast<int64_t>(memory.used);
      reading.memory_total_bytes = static_cast<int64_t>(memory.total);
    }
    if (unsigned int milliwatts = 0; nvml.power_milliwatts(device, &milliwatts) == kNvmlSuccess) {
      reading.power_watts = milliwatts / 1000.0;
    }
    readings.push_back(reading);
  }
  return readings;
}

}  // namespace dtbench
