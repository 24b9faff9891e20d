#include "core/cuda/check.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/cuda/cublas_library.h"

namespace dtbench::cuda {

namespace {

[[noreturn]] void fail(const char* library, const char* message, const char* call, const char* file, int line) {
  throw std::runtime_error(fmt::format("{} call {} failed: {} ({}:{})", library, call, message, file, line));
}

}  // namespace

void check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) fail("CUDA", cudaGetErrorString(status), call, file, line);
}

void check(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS) fail("cuDNN", cudnnGetErrorString(status), call, file, line);
}

void check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) fail("cuBLAS", cublas_library().status_string(status), call, file, line);
}

}  // namespace dtbench::cuda
