#pragma once
// One worker's GPU: its stream, the cuBLAS and cuDNN handles bound to it, the one scratch
// workspace every cuDNN call shares, the cache of convolution algorithms — and its memory, all
// plain device allocations (cudaMalloc): layer outputs and scratch on the device alone, the
// parameter arena as pinned host memory mirrored on the device (plan/host_mirror.h), so that
// host code (transports, checksums, saved weights) works on the host copy and the twins on the
// device's, with copies where one side wrote what the other reads next. No managed memory: on a
// GPU shared with other work, managed memory asked past what the card has free can hang it.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/cuda/check.h"
#include "core/cuda/plan/conv_algorithm_cache.h"
#include "core/cuda/plan/host_mirror.h"
#include "core/device/device.h"
#include "core/tensor/tensor.h"

namespace dtbench::cuda {

class DeviceBuffer;

// Zero-filled device memory (cudaMalloc), reserved against the process's GPU memory budget first
// (plan/memory_budget.h) and given back when freed; `what` names it in the budget's error.
std::shared_ptr<void> allocate_device_bytes(int64_t bytes, std::string_view what);

template <typename T>
std::shared_ptr<T[]> device_array(int64_t count, std::string_view what) {
  std::shared_ptr<void> memory = allocate_device_bytes(count * static_cast<int64_t>(sizeof(T)), what);
  T* values = static_cast<T*>(memory.get());
  return std::shared_ptr<T[]>(std::move(memory), values);
}

// Zero-filled pinned host floats with a zero-filled device copy, registered in host_mirrors()
// while they live: a core/device FloatAllocator (the parameter arena's).
std::shared_ptr<float[]> allocate_mirrored(int64_t count);
// The process's mirrored blocks; their copies wait for the device (synchronous cudaMemcpy).
const cuda_plan::HostMirrors& host_mirrors();

class CudaContext {
 public:
  // `processes_on_device`: how many processes share this GPU (their memory budgets split its
  // free memory). `precision` sets cuBLAS's math mode here and cuDNN's convolutions' (conv_math):
  // fp32 keeps the tensor cores off (FMA arithmetic, as the CPU computes); tf32 lets both use them
  // (an InputError on a GPU without TF32, before compute capability 8.0).
  CudaContext(int device, int processes_on_device, Precision precision = Precision::Fp32);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  const std::string& description() const { return description_; }
  Precision precision() const { return precision_; }
  // The math type every convolution descriptor is given.
  cudnnMathType_t conv_math() const { return precision_ == Precision::Tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH; }
  // The GPU, its memory, the NVIDIA driver, the CUDA runtime, cuDNN and cuBLAS, for reports.
  nlohmann::json properties() const;
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cuda_plan::ConvAlgorithmCache& conv_algorithms() { return conv_algorithms_; }
  const cuda_plan::ConvAlgorithmCache& conv_algorithms() const { return conv_algorithms_; }

  // At least `bytes` of scratch, valid until the next call (the workspace only grows).
  void* workspace(int64_t bytes);
  // The most workspace an algorithm search may weigh (from the device's free memory).
  int64_t search_workspace_limit() const;
  // A device vector of at least `count` ones, for bias reductions as matrix-vector products.
  const float* ones(int64_t count);
  // True when device kernels may read `pointer` (device memory; host memory, pinned or not, is
  // copied to the device first).
  bool device_accessible(const void* pointer) const;
  // `tensor`'s data where a kernel can read it: the tensor's own (device memory), or a copy queued
  // into `staging` (a host layer's output, the loader's batch).
  const float* readable(const Tensor& tensor, DeviceBuffer& staging);
  // The device's copy of mirrored host floats (the arena's parameters and gradients).
  float* on_device(const float* host, int64_t count) const { return host_mirrors().device_address(host, count); }
  std::span<float> on_device(std::span<float> host) const { return host_mirrors().device_view(host); }
  // Copies `count` floats from the device into host memory, after the work queued before it.
  void download(const float* device, float* host, int64_t count);
  // The same into device memory from the host.
  void upload(const void* host, void* device, int64_t bytes);
  void synchronize();
  // The end of a twin's forward or backward: waits for the device only while operator timing is
  // on (DeviceBackend::set_operator_timing); otherwise the work stays queued behind the stream and
  // whoever reads what it made waits (the loss, the copies of the arena, downloads).
  void end_operation() {
    if (wait_each_operation_) synchronize();
  }
  void set_wait_each_operation(bool on) { wait_each_operation_ = on; }

 private:
  int device_;
  Precision precision_;
  std::string description_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  std::shared_ptr<float[]> ones_;
  int64_t ones_count_ = 0;
  bool wait_each_operation_ = false;
  cuda_plan::ConvAlgorithmCache conv_algorithms_;
};

// A growing block of device floats a layer keeps (outputs, gradients, staging), seen as a Tensor.
class DeviceBuffer {
 public:
  // A view of at least element_count(shape) floats, reallocated only when it must grow.
  Tensor as(const Shape& shape);
  float* data() { return storage_.get(); }

 private:
  std::shared_ptr<float[]> storage_;
  int64_t capacity_ = 0;
};

}  // namespace dtbench::cuda
