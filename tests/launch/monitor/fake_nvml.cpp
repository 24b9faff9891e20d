// A stand-in for NVML's libnvidia-ml.so.1, so the GPU sampler's loading, calls and struct layouts
// are tested on machines without a GPU. Written from NVML's documentation independently of
// launch/monitor/gpu_sampler.cpp: two devices with fixed readings, the second without a power reading
// (as on boards that do not report it). FAKE_NVML_INIT_ERROR=<code> makes nvmlInit_v2 fail with
// that code; FAKE_NVML_DEVICES=<n> sets the device count.
#include <cstdio>
#include <cstdlib>

namespace {

struct FakeDevice {
  unsigned int index;
};
FakeDevice devices[2] = {{0}, {1}};

struct Utilization {  // nvmlUtilization_t
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3;
constexpr unsigned long long kGiB = 1ull << 30;

}  // namespace

extern "C" {

int nvmlInit_v2() {
  const char* error = std::getenv("FAKE_NVML_INIT_ERROR");
  return error != nullptr ? std::atoi(error) : kSuccess;
}

int nvmlShutdown() { return kSuccess; }

const char* nvmlErrorString(int code) { return code == 9 ? "Driver Not Loaded" : "Unknown Error"; }

int nvmlDeviceGetCount_v2(unsigned int* count) {
  const char* devices_text = std::getenv("FAKE_NVML_DEVICES");
  *count = devices_text != nullptr ? static_cast<unsigned int>(std::atoi(devices_text)) : 2;
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, FakeDevice** device) {
  if (index >= 2) return kInvalidArgument;
  *device = &devices[index];
  return kSuccess;
}

int nvmlDeviceGetName(FakeDevice* device, char* name, unsigned int length) {
  std::snprintf(name, length, "Fake GPU %u", device->index);
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(FakeDevice* device, Utilization* rates) {
  rates->gpu = 37 + device->index;
  rates->memory = 5;
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(FakeDevice* device, Memory* memory) {
  memory->total = 8 * kGiB;
  memory->used = (device->index + 1) * kGiB;
  memory->free = memory->total - memory->used;
  return kSuccess;
}

int nvmlDeviceGetPowerUsage(FakeDevice* device, unsigned int* milliwatts) {
  if (device->index == 1) return kNotSupported;
  *milliwatts = 123456;
  return kSuccess;
}

}  // extern "C"
