#include "core/cuda/context.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/cuda/plan/managed_budget.h"
#include "core/cuda/plan/workspace.h"

namespace dtbench::cuda {

namespace {

// The process's managed-memory limit, from the current device's free memory, when no context has
// set it yet.
void limit_managed_memory(int processes_on_device) {
  auto& budget = cuda_plan::managed_budget();
  if (budget.has_limit()) return;
  size_t free = 0, total = 0;
  DTB_CUDA(cudaMemGetInfo(&free, &total));
  budget.set_limit(cuda_plan::managed_limit_for(static_cast<int64_t>(free), processes_on_device));
}

}  // namespace

std::shared_ptr<void> allocate_managed_bytes(int64_t bytes, std::string_view what) {
  const auto size = static_cast<int64_t>(std::max<int64_t>(bytes, 1));
  limit_managed_memory(1);
  cuda_plan::managed_budget().reserve(size, what);
  void* memory = nullptr;
  const cudaError_t status = cudaMallocManaged(&memory, static_cast<size_t>(size), cudaMemAttachGlobal);
  if (status != cudaSuccess) {
    cuda_plan::managed_budget().release(size);
    DTB_CUDA(status);
  }
  std::shared_ptr<void> owned(memory, [size](void* p) {
    cudaFree(p);
    cuda_plan::managed_budget().release(size);
  });
  DTB_CUDA(cudaMemset(memory, 0, static_cast<size_t>(size)));
  DTB_CUDA(cudaDeviceSynchronize());  // the host may write it next
  return owned;
}

std::shared_ptr<float[]> allocate_managed(int64_t count) {
  return managed_array<float>(count, "a parameter arena or layer buffer");
}

CudaContext::CudaContext(int device, int processes_on_device) : device_(device) {
  DTB_CUDA(cudaSetDevice(device));
  limit_managed_memory(processes_on_device);
  cudaDeviceProp properties{};
  DTB_CUDA(cudaGetDeviceProperties(&properties, device));
  description_ = fmt::format("cuda:{} ({}, {:.0f} GiB)", device, properties.name,
                             static_cast<double>(properties.totalGlobalMem) / (1 << 30));
  can_prefetch_ = properties.concurrentManagedAccess != 0;
  DTB_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  DTB_CUDA(cublasCreate(&cublas_));
  DTB_CUDA(cublasSetStream(cublas_, stream_));
  DTB_CUDA(cudnnCreate(&cudnn_));
  DTB_CUDA(cudnnSetStream(cudnn_, stream_));
}

CudaContext::~CudaContext() {
  // Destructors do not throw: whatever fails here leaves nothing to recover.
  cudaStreamSynchronize(stream_);
  if (workspace_ != nullptr) cudaFree(workspace_);
  cudnnDestroy(cudnn_);
  cublasDestroy(cublas_);
  cudaStreamDestroy(stream_);
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
    ones_ = allocate_managed(count);
    std::fill_n(ones_.get(), count, 1.0f);  // allocate_managed synchronised; the host may write
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

void CudaContext::synchronize() { DTB_CUDA(cudaStreamSynchronize(stream_)); }

void CudaContext::prefetch(const float* values, int64_t count, bool to_device) {
  if (!can_prefetch_ || count <= 0) return;
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
#if CUDART_VERSION >= 13000
  cudaMemLocation where{};
  where.type = to_device ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
  where.id = to_device ? device_ : 0;
  DTB_CUDA(cudaMemPrefetchAsync(values, bytes, where, 0, stream_));
#else
  DTB_CUDA(cudaMemPrefetchAsync(values, bytes, to_device ? device_ : cudaCpuDeviceId, stream_));
#endif
  DTB_CUDA(cudaStreamSynchronize(stream_));
}

Tensor ManagedBuffer::as(const Shape& shape) {
  const int64_t needed = element_count(shape);
  if (needed > capacity_ || storage_ == nullptr) {
    storage_ = allocate_managed(needed);
    capacity_ = needed;
  }
  return Tensor::view(storage_.get(), shape);
}

}  // namespace dtbench::cuda
