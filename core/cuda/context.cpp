#include "core/cuda/context.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/cuda/cublas_library.h"
#include "core/cuda/plan/memory_budget.h"
#include "core/cuda/plan/workspace.h"
#include "core/util/error.h"

namespace dtbench::cuda {

namespace {

// The process's device-memory limit, from the current device's free memory, when no context has
// set it yet.
void limit_device_memory(int processes_on_device) {
  auto& budget = cuda_plan::memory_budget();
  if (budget.has_limit()) return;
  size_t free = 0, total = 0;
  DTB_CUDA(cudaMemGetInfo(&free, &total));
  budget.set_limit(cuda_plan::memory_limit_for(static_cast<int64_t>(free), processes_on_device));
}

// After everything queued on any stream: the twins' streams do not wait for the legacy one.
void copy_floats(float* to, const float* from, int64_t count, cudaMemcpyKind kind) {
  DTB_CUDA(cudaDeviceSynchronize());
  DTB_CUDA(cudaMemcpy(to, from, static_cast<size_t>(count) * sizeof(float), kind));
}

cuda_plan::HostMirrors& mirrors() {
  static cuda_plan::HostMirrors registry(
      [](float* to, const float* from, int64_t count) { copy_floats(to, from, count, cudaMemcpyHostToDevice); },
      [](float* to, const float* from, int64_t count) { copy_floats(to, from, count, cudaMemcpyDeviceToHost); });
  return registry;
}

}  // namespace

std::shared_ptr<void> allocate_device_bytes(int64_t bytes, std::string_view what) {
  const auto size = static_cast<int64_t>(std::max<int64_t>(bytes, 1));
  limit_device_memory(1);
  cuda_plan::memory_budget().reserve(size, what);
  void* memory = nullptr;
  const cudaError_t status = cudaMalloc(&memory, static_cast<size_t>(size));
  if (status != cudaSuccess) {
    cuda_plan::memory_budget().release(size);
    DTB_CUDA(status);
  }
  std::shared_ptr<void> owned(memory, [size](void* p) {
    cudaFree(p);
    cuda_plan::memory_budget().release(size);
  });
  DTB_CUDA(cudaMemset(memory, 0, static_cast<size_t>(size)));
  DTB_CUDA(cudaDeviceSynchronize());  // the zeros land before any stream's work on them
  return owned;
}

std::shared_ptr<float[]> allocate_mirrored(int64_t count) {
  const int64_t floats = std::max<int64_t>(count, 1);
  std::shared_ptr<float[]> device = device_array<float>(floats, "a parameter arena");
  void* pinned = nullptr;
  DTB_CUDA(cudaMallocHost(&pinned, static_cast<size_t>(floats) * sizeof(float)));
  auto* host = static_cast<float*>(pinned);
  std::fill_n(host, floats, 0.0f);
  mirrors().add(host, device.get(), floats);
  return std::shared_ptr<float[]>(host, [device](float* p) {
    mirrors().remove(p);
    cudaFreeHost(p);
  });
}

const cuda_plan::HostMirrors& host_mirrors() { return mirrors(); }

namespace {

// "580.159.04" from the kernel module's own line; "" where the file is not there. The first word
// after "Kernel Module" that starts with a digit: the open module's line reads "... Open Kernel
// Module for x86_64  580.159.04  Release Build ...", the proprietary one's "... Kernel Module
// 580.159.04  Tue ..." (an H200 run printed "driver for" before).
std::string nvidia_driver_version() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  std::getline(file, line);
  const auto module = line.find("Kernel Module");
  if (module == std::string::npos) return "";
  std::istringstream words(line.substr(module + 13));
  for (std::string word; words >> word;) {
    if (std::isdigit(static_cast<unsigned char>(word.front()))) return word;
  }
  return "";
}

// 13000 → "13.0", as cudaRuntimeGetVersion and cudaDriverGetVersion count.
std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

}  // namespace

CudaContext::CudaContext(int device, int processes_on_device, Precision precision)
    : device_(device), precision_(precision) {
  DTB_CUDA(cudaSetDevice(device));
  cudaDeviceProp properties{};
  DTB_CUDA(cudaGetDeviceProperties(&properties, device));
  if (precision == Precision::Tf32 && properties.major < 8) {
    fail_input("precision: 'tf32' needs TF32 tensor cores (compute capability 8.0, Ampere, or later); GPU {} ({}) "
               "has compute capability {}.{}: use precision fp32",
               device, properties.name, properties.major, properties.minor);
  }
  limit_device_memory(processes_on_device);
  description_ = fmt::format("cuda:{} ({}, {:.0f} GiB)", device, properties.name,
                             static_cast<double>(properties.totalGlobalMem) / (1 << 30));
  DTB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  DTB_CUDA(cublas_library().create(&cublas_));
  DTB_CUDA(cublas_library().set_stream(cublas_, stream_));
  // cuBLAS's default math has no TF32 (it is asked for by name); the FMA convolutions are conv_math's.
  DTB_CUDA(cublas_library().set_math_mode(
      cublas_, precision == Precision::Tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  DTB_CUDA(cudnnCreate(&cudnn_));
  DTB_CUDA(cudnnSetStream(cudnn_, stream_));
}

CudaContext::~CudaContext() {
  // Destructors do not throw: whatever fails here leaves nothing to recover.
  cudaStreamSynchronize(stream_);
  if (workspace_ != nullptr) cudaFree(workspace_);
  cudnnDestroy(cudnn_);
  if (cublas_ != nullptr) cublas_library().destroy(cublas_);
  cudaStreamDestroy(stream_);
}

nlohmann::json CudaContext::properties() const {
  cudaDeviceProp device{};
  DTB_CUDA(cudaGetDeviceProperties(&device, device_));
  int runtime = 0, driver = 0, cublas = 0;
  DTB_CUDA(cudaRuntimeGetVersion(&runtime));
  DTB_CUDA(cudaDriverGetVersion(&driver));
  DTB_CUDA(cublas_library().get_version(cublas_, &cublas));
  const auto cudnn = static_cast<int>(cudnnGetVersion());  // 9.10.2: 91002 (before 9: 8902 for 8.9.2)
  const std::string cudnn_text = cudnn >= 90000 ? fmt::format("{}.{}.{}", cudnn / 10000, cudnn / 100 % 100, cudnn % 100)
                                                : fmt::format("{}.{}.{}", cudnn / 1000, cudnn / 100 % 10, cudnn % 100);
  return {{"name", description_},
          {"gpu", device.name},
          {"memory_bytes", static_cast<int64_t>(device.totalGlobalMem)},
          {"compute_capability", fmt::format("{}.{}", device.major, device.minor)},
          {"driver", nvidia_driver_version()},
          {"cuda_driver_api", cuda_version_text(driver)},
          {"cuda_runtime", cuda_version_text(runtime)},
          {"cudnn", cudnn_text},
          {"cublas", fmt::format("{}.{}.{}", cublas / 10000, cublas / 100 % 100, cublas % 100)}};
}

void* CudaContext::workspace(int64_t bytes) {
  const int64_t wanted = cuda_plan::workspace_size_for(workspace_bytes_, bytes);
  if (wanted != workspace_bytes_) {
    DTB_CUDA(cudaStreamSynchronize(stream_));  // the old block may still be in use
    if (workspace_ != nullptr) DTB_CUDA(cudaFree(workspace_));
    workspace_ = nullptr;
    DTB_CUDA(cudaMalloc(&workspace_, static_cast<size_t>(wanted)));
    workspace_bytes_ = wanted;
  }
  return workspace_;
}

int64_t CudaContext::search_workspace_limit() const {
  size_t free_bytes = 0, total_bytes = 0;
  DTB_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  constexpr int64_t kCap = int64_t{1} << 30;  // no algorithm is worth a GiB of scratch
  return cuda_plan::search_workspace_limit(static_cast<int64_t>(free_bytes), kCap);
}

const float* CudaContext::ones(int64_t count) {
  if (count > ones_count_) {
    ones_ = device_array<float>(count, "a vector of ones");
    const std::vector<float> host(static_cast<size_t>(count), 1.0f);
    upload(host.data(), ones_.get(), count * static_cast<int64_t>(sizeof(float)));
    ones_count_ = count;
  }
  return ones_.get();
}

bool CudaContext::device_accessible(const void* pointer) const {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();  // clear it: plain host memory is an answer, not an error
    return false;
  }
  return attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
}

const float* CudaContext::readable(const Tensor& tensor, DeviceBuffer& staging) {
  if (tensor.empty() || device_accessible(tensor.data())) return tensor.data();
  Tensor copy = staging.as(tensor.shape());
  DTB_CUDA(cudaMemcpyAsync(copy.data(), tensor.data(), static_cast<size_t>(tensor.numel()) * sizeof(float),
                           cudaMemcpyHostToDevice, stream_));
  return copy.data();
}

void CudaContext::download(const float* device, float* host, int64_t count) {
  if (count <= 0) return;
  DTB_CUDA(cudaMemcpyAsync(host, device, static_cast<size_t>(count) * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  synchronize();
}

void CudaContext::upload(const void* host, void* device, int64_t bytes) {
  if (bytes <= 0) return;
  DTB_CUDA(cudaMemcpyAsync(device, host, static_cast<size_t>(bytes), cudaMemcpyHostToDevice, stream_));
  synchronize();
}

void CudaContext::synchronize() { DTB_CUDA(cudaStreamSynchronize(stream_)); }

Tensor DeviceBuffer::as(const Shape& shape) {
  const int64_t needed = element_count(shape);
  if (needed > capacity_ || storage_ == nullptr) {
    storage_ = device_array<float>(needed, "a layer's output or gradient");
    capacity_ = needed;
  }
  return Tensor::view(storage_.get(), shape);
}

}  // namespace dtbench::cuda
