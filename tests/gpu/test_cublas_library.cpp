// cuBLAS is opened when a CUDA context first needs it, not when dtbench starts (core/cuda/
// cublas_library.h): a CPU run does not pay for loading libcublasLt. Built with the CUDA backend
// only; needs the toolkit's libraries, not a GPU.
#include <gtest/gtest.h>

#include <string>

#include "core/cuda/cublas_library.h"
#include "support/cli_helpers.h"

namespace dtbench::cuda {
namespace {

TEST(CublasLibrary, IsOpenedOnFirstUseWithEveryCallTheBackendMakes) {
  EXPECT_FALSE(cublas_loaded()) << "this test binary loaded cuBLAS before anything asked for it";
  const CublasLibrary& cublas = cublas_library();
  EXPECT_TRUE(cublas_loaded());
  for (const void* call : {reinterpret_cast<const void*>(cublas.create), reinterpret_cast<const void*>(cublas.destroy),
                           reinterpret_cast<const void*>(cublas.set_stream),
                           reinterpret_cast<const void*>(cublas.set_math_mode),
                           reinterpret_cast<const void*>(cublas.get_version),
                           reinterpret_cast<const void*>(cublas.status_string),
                           reinterpret_cast<const void*>(cublas.sgemm), reinterpret_cast<const void*>(cublas.sgemv),
                           reinterpret_cast<const void*>(cublas.sger)}) {
    EXPECT_NE(call, nullptr);
  }
  // A call that needs no GPU: the library's own text for one of its statuses.
  EXPECT_STREQ(cublas.status_string(CUBLAS_STATUS_NOT_INITIALIZED), "the library was not initialized");
  EXPECT_EQ(&cublas_library(), &cublas);  // opened once
}

// What the loader initialised for a CPU command: no cuBLAS (nor cuBLASLt, which it brings).
TEST(CublasLibrary, ACpuCommandDoesNotLoadIt) {
  for (const std::string arguments : {"--version", "bench step --device cpu --model mlp --batch 2 --steps 1 --warmup 0"}) {
    const testing::Outcome r = testing::shell("LD_DEBUG=libs " + std::string(DTBENCH_BINARY) + " " + arguments);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("calling init: "), std::string::npos) << "LD_DEBUG printed nothing:\n" << r.output;
    EXPECT_EQ(r.output.find("libcublas"), std::string::npos) << "dtbench " << arguments << " loaded cuBLAS";
  }
}

}  // namespace
}  // namespace dtbench::cuda
