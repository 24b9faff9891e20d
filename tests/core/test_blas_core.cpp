// The BLAS core is chosen by each process for itself: a process that re-executed itself onto another
// core does not hand that decision down to the processes it starts (a sweep's runs, its parameter
// servers, the GPU kit's dtbench started by a test binary that was itself raised).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "core/util/blas.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using testing::Outcome;
using testing::shell;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// One training step of the smallest model: dtbench prints the BLAS core it runs on.
std::string step_command() {
  return testing::dtbench_binary() + " bench step --device cpu --model mlp --batch 2 --steps 1 --warmup 0";
}

// The core a `bench step` output names ("BLAS core Haswell, 1 threads" -> "Haswell").
std::string core_named(const std::string& output) {
  const std::string marker = "BLAS core ";
  const size_t at = output.find(marker);
  if (at == std::string::npos) return "";
  const size_t start = at + marker.size();
  return output.substr(start, output.find_first_of(", \n", start) - start);
}

class BlasCore : public ::testing::Test {
 protected:
  void SetUp() override {
    if (blas::preferred_core().empty()) GTEST_SKIP() << "this CPU has no core better than OpenBLAS's own choice";
  }
};

TEST_F(BlasCore, AProcessStartedByAReexecutedOneDecidesForItself) {
  // The parent is forced onto Prescott, so it re-executes itself on any CPU; its child is told
  // nothing but the OPENBLAS_CORETYPE=Prescott it inherits, and must raise that for itself.
  const Outcome r = shell("DTBENCH_BLAS_CORE=Prescott " + std::string(BLAS_PARENT) + " 'env -u DTBENCH_BLAS_CORE " +
                          step_command() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("parent: BLAS core Prescott (forced by DTBENCH_BLAS_CORE)"), std::string::npos) << r.output;
  const std::string child_part = r.output.substr(r.output.find('\n') + 1);
  EXPECT_EQ(lower(core_named(child_part)), lower(blas::preferred_core())) << r.output;
}

TEST_F(BlasCore, AMarkerLeftFromAnotherProcessIsIgnored) {
  // The marker as an older dtbench left it (empty), and as one set for another pid: neither stops
  // this process from raising its own core.
  for (const std::string marker : {"", "1:Haswell"}) {
    const Outcome r = shell("DTBENCH_BLAS_RAISED_FROM='" + marker + "' OPENBLAS_CORETYPE=Prescott " + step_command());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(lower(core_named(r.output)), lower(blas::preferred_core())) << "marker '" << marker << "'\n" << r.output;
  }
}

TEST_F(BlasCore, TheReexecutedProcessReportsItsOwnRaiseAndPassesNoMarkerOn) {
  const Outcome r = shell("OPENBLAS_CORETYPE=Prescott " + std::string(BLAS_PARENT) +
                          " 'echo \"child sees marker: [${DTBENCH_BLAS_RAISED_FROM-unset}]\"'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("(raised from Prescott (inherited OPENBLAS_CORETYPE) to "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("child sees marker: [unset]"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dtbench
