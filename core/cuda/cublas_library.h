#pragma once
// cuBLAS, opened when the first CUDA context needs it rather than when any dtbench process starts.
// libcublas brings libcublasLt, about 540 MB whose relocations cost 0.4 s of CPU (25,000 page
// faults) per load: linked, every command and every MPI rank paid it — twice, as dtbench
// re-executes itself to raise OpenBLAS's core — GPU or not (a CPU `dtbench --version` took 2 s on
// a 2-core Zen 5). cuDNN opens its own large parts the same way. Only the calls dtbench makes are
// looked up; their types come from cublas_v2.h, so a changed signature fails to compile.
#include <cublas_v2.h>

namespace dtbench::cuda {

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasGetVersion_v2) get_version = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasSgemv_v2) sgemv = nullptr;
  decltype(&cublasSger_v2) sger = nullptr;
};

// The library this build was compiled against (libcublas.so.<CUDA major>), opened once by the
// loader's search (LD_LIBRARY_PATH, the GPU kit's library path, the binary's run path); throws,
// naming the library and the loader's reason, when it or one of the calls cannot be found.
const CublasLibrary& cublas_library();

// Whether this process has cuBLAS loaded (opened here or by anything else), without opening it.
bool cublas_loaded();

}  // namespace dtbench::cuda
