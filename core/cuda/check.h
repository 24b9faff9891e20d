#pragma once
// Every CUDA, cuDNN and cuBLAS call is checked: a failure throws std::runtime_error naming the
// call, the library's own message and where, and is caught once in main like any other error.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

namespace dtbench::cuda {

void check(cudaError_t status, const char* call, const char* file, int line);
void check(cudnnStatus_t status, const char* call, const char* file, int line);
void check(cublasStatus_t status, const char* call, const char* file, int line);

}  // namespace dtbench::cuda

#define DTB_CUDA(call) ::dtbench::cuda::check((call), #call, __FILE__, __LINE__)
