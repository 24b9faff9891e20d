// cuBLAS is opened when a CUDA context first needs it, not when dtbench starts (core/cuda/
// cublas_library.h): a CPU run does not pay for loading libcublasLt. Built with the CUDA backend
// only; needs the toolkit's libraries, not a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "core/cuda/cublas_library.h"
#include "support/cli_helpers.h"

namespace dtbench::cuda {
namespace {

// cublas_library() returns only once every call the backend makes was found (it throws naming a
// missing one), so what is left to see is that nothing opened it before, and that a call works.
TEST(CublasLibrary, IsOpenedOnFirstUseAndItsCallsWork) {
  EXPECT_FALSE(cublas_loaded()) << "this test binary loaded cuBLAS before anything asked for it";
  const CublasLibrary& cublas = cublas_library();
  EXPECT_TRUE(cublas_loaded());
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

// A machine whose cuBLAS cannot be loaded: the error names the library and what to do. This binary
// runs itself again in a mount namespace where the library's file reads as empty.
TEST(CublasLibrary, WhereItCannotBeOpenedTheErrorNamesItAndTheWayOut) {
  if (std::getenv("DTBENCH_TEST_CUBLAS_HIDDEN") != nullptr) {
    try {
      cublas_library();
      ADD_FAILURE() << "cuBLAS opened although its file was hidden";
    } catch (const std::runtime_error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("cannot open libcublas.so."), std::string::npos) << message;
      EXPECT_NE(message.find("LD_LIBRARY_PATH"), std::string::npos) << message;
    }
    return;
  }
  if (geteuid() != 0) GTEST_SKIP() << "hiding the library needs root (a mount namespace)";
  Dl_info where{};
  ASSERT_NE(dladdr(reinterpret_cast<const void*>(cublas_library().create), &where), 0);
  const std::string file = std::filesystem::canonical(where.dli_fname).string();
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const testing::Outcome r = testing::shell(
      "DTBENCH_TEST_CUBLAS_HIDDEN=1 unshare -m sh -c 'mount --bind /dev/null " + file + " && " + self +
      " --gtest_filter=CublasLibrary.WhereItCannotBeOpenedTheErrorNamesItAndTheWayOut'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dtbench::cuda
