#pragma once
// core/cuda: the CUDA device backend (cuDNN, cuBLAS and our own kernels for what they lack). It
// owns everything that touches the CUDA runtime in core; it may include core only. Built as the
// library core_cuda when the toolkit is found (cmake/cuda.cmake); without it, core_cuda holds the
// plain-C++ planning parts (plan/) and a register_device_backends() that registers nothing.
#include <string>

namespace dtbench {

// Adds `cuda` to core/device's registry (when built with it). Called once by the command line.
void register_device_backends();

// Whether this binary holds the CUDA backend, and the toolkit it was compiled with ("13.0").
bool cuda_backend_built();
std::string cuda_backend_toolkit();
// The CUDA devices this process can use: 0 without the backend, a GPU or a driver.
int cuda_device_count();

}  // namespace dtbench
