#pragma once
// One worker's GPU: its stream, the cuBLAS and cuDNN handles bound to it, the one scratch
// workspace every cuDNN call shares, the cache of convolution algorithms, and memory that both
// the host and the device can use (CUDA managed memory), in which the backend keeps the parameter
// arena and every layer output, so that host code (loss, composite layers, optimizer, transports)
// reads them once the stream is synchronised.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/cuda/check.h"
#include "core/cuda/plan/conv_algorithm_cache.h"
#include "core/tensor/tensor.h"

namespace dtbench::cuda {

// Zero-filled managed memory, reserved against the process's managed budget first
// (plan/managed_budget.h: never more than the GPU had free) and given back when freed.
std::shared_ptr<void> allocate_managed_bytes(int64_t bytes, std::string_view what);

template <typename T>
std::shared_ptr<T[]> managed_array(int64_t count, std::string_view what) {
  std::shared_ptr<void> memory = allocate_managed_bytes(count * static_cast<int64_t>(sizeof(T)), what);
  T* values = static_cast<T*>(memory.get());
  return std::shared_ptr<T[]>(std::move(memory), values);
}

// Zero-filled managed floats: a core/device FloatAllocator.
std::shared_ptr<float[]> allocate_managed(int64_t count);

class CudaContext {
 public:
  // `processes_on_device`: how many processes share this GPU (their managed budgets split its
  // free memory).
  CudaContext(int device, int processes_on_device);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  const std::string& description() const { return description_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cuda_plan::ConvAlgorithmCache& conv_algorithms() { return conv_algorithms_; }

  // At least `bytes` of scratch, valid until the next call (the workspace only grows).
  void* workspace(int64_t bytes);
  // The most workspace an algorithm search may weigh (from the device's free memory).
  int64_t search_workspace_limit() const;
  // A device vector of at least `count` ones, for bias reductions as matrix-vector products.
  const float* ones(int64_t count);
  // True when device kernels may read `pointer` (device or managed memory).
  bool device_accessible(const void* pointer) const;
  void synchronize();
  // Migrates managed memory in bulk to the host or to this device and waits for it; nothing on a
  // device that cannot prefetch (no concurrent managed access), where pages move on first touch.
  void prefetch(const float* values, int64_t count, bool to_device);

 private:
  int device_;
  std::string description_;
  bool can_prefetch_ = false;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  void* workspace_ = nullptr;
  int64_t workspace_bytes_ = 0;
  std::shared_ptr<float[]> ones_;
  int64_t ones_count_ = 0;
  cuda_plan::ConvAlgorithmCache conv_algorithms_;
};

// A growing block of managed floats a layer keeps (outputs, gradients, staging), seen as a Tensor.
class ManagedBuffer {
 public:
  // A view of at least element_count(shape) floats, reallocated only when it must grow.
  Tensor as(const Shape& shape);
  float* data() { return storage_.get(); }

 private:
  std::shared_ptr<float[]> storage_;
  int64_t capacity_ = 0;
};

}  // namespace dtbench::cuda
