// The CUDA backend is built wherever it can be: when configuring found the toolkit (with cuDNN
// and NCCL), or when nvcc is installed where the toolkit usually is and DTBENCH_CUDA did not turn
// it off, this binary must hold the backend. Catches an AUTO configure that silently fell back to
// the CPU build on a machine (CI's) that has CUDA.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/cuda/register.h"

namespace dtbench {
namespace {

TEST(CudaBuild, TheBackendIsBuiltWhenTheToolkitWasFound) {
  const bool toolkit_found = DTBENCH_TEST_CUDA_TOOLKIT_FOUND;
  EXPECT_EQ(cuda_backend_built(), toolkit_found)
      << "configure " << (toolkit_found ? "found" : "did not find") << " the CUDA toolkit, but core_cuda "
      << (cuda_backend_built() ? "holds" : "does not hold") << " the backend";
  if (cuda_backend_built()) {
    EXPECT_FALSE(cuda_backend_toolkit().empty());
  }
}

TEST(CudaBuild, AnInstalledToolkitIsNotMissedByAuto) {
  const std::string mode = DTBENCH_TEST_CUDA_MODE;
  if (mode == "OFF") GTEST_SKIP() << "configured with DTBENCH_CUDA=OFF";
  const char* nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc)) GTEST_SKIP() << "no CUDA toolkit at " << nvcc;
  EXPECT_TRUE(cuda_backend_built()) << nvcc << " is installed but DTBENCH_CUDA=" << mode
                                    << " did not build the CUDA backend (see cmake's 'CUDA backend:' line)";
}

}  // namespace
}  // namespace dtbench
