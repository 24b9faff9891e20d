#pragma once
// The per-index bodies of the CUDA backend's own kernels are plain functions both compilers see:
// nvcc runs them in a kernel, one index per thread; the CPU tests run the very same arithmetic
// over the same index space with a loop and compare it with the CPU layer.
#if defined(__CUDACC__)
#define DTB_HOST_DEVICE __host__ __device__
#else
#define DTB_HOST_DEVICE
#endif
