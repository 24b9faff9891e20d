#include "core/cuda/cublas_library.h"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace dtbench::cuda {

namespace {

template <typename Function>
void look_up(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  if (function == nullptr) {
    throw std::runtime_error(fmt::format("cuBLAS: {} has no {} ({})", DTBENCH_CUBLAS_SONAME, name, dlerror()));
  }
}

CublasLibrary open_cublas() {
  // Kept open for the process's life: cuBLAS handles may outlive any one caller.
  void* library = dlopen(DTBENCH_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    throw std::runtime_error(fmt::format(
        "cuBLAS: cannot open {} (this build was compiled with CUDA {}): {}; put the toolkit's library folder "
        "on LD_LIBRARY_PATH, or run through the GPU kit's bin/run",
        DTBENCH_CUBLAS_SONAME, DTBENCH_CUDA_TOOLKIT_VERSION, dlerror()));
  }
  CublasLibrary c;
  look_up(library, "cublasCreate_v2", c.create);
  look_up(library, "cublasDestroy_v2", c.destroy);
  look_up(library, "cublasSetStream_v2", c.set_stream);
  look_up(library, "cublasSetMathMode", c.set_math_mode);
  look_up(library, "cublasGetVersion_v2", c.get_version);
  look_up(library, "cublasGetStatusString", c.status_string);
  look_up(library, "cublasSgemm_v2", c.sgemm);
  look_up(library, "cublasSgemv_v2", c.sgemv);
  look_up(library, "cublasSger_v2", c.sger);
  return c;
}

}  // namespace

const CublasLibrary& cublas_library() {
  // A failed open throws out of call_once and is tried again by the next caller.
  static std::once_flag once;
  static CublasLibrary library;
  std::call_once(once, [] { library = open_cublas(); });
  return library;
}

bool cublas_loaded() {
  void* library = dlopen(DTBENCH_CUBLAS_SONAME, RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) return false;
  dlclose(library);  // RTLD_NOLOAD took a reference
  return true;
}

}  // namespace dtbench::cuda
