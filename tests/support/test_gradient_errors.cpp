// The per-parameter table the GPU model-step check prints on a mismatch: each parameter's largest
// error against its own largest gradient, in the model's order, the worst relative one marked.
#include <gtest/gtest.h>

#include <vector>

#include "tests/support/gradient_errors.h"

namespace dtbench {
namespace {

TEST(GradientErrors, EachParameterIsMeasuredAgainstItsOwnLargestGradient) {
  Param weight{.name = "conv1.weight", .shape = {2, 2}};
  Param bias{.name = "conv1.bias", .shape = {2}};
  weight.offset = 0;
  bias.offset = 4;
  const std::vector<float> expected{1.0f, -8.0f, 2.0f, 0.5f, 0.01f, -0.02f};
  const std::vector<float> got{1.0f, -7.9f, 2.0f, 0.5f, 0.01f, -0.03f};
  const auto errors = testing::param_gradient_errors({&weight, &bias}, expected, got);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].name, "conv1.weight");
  EXPECT_NEAR(errors[0].max_abs_error, 0.1, 1e-6);
  EXPECT_NEAR(errors[0].max_abs_grad, 8.0, 1e-6);
  EXPECT_NEAR(errors[0].relative(), 0.0125, 1e-6);
  EXPECT_NEAR(errors[1].max_abs_error, 0.01, 1e-6);
  EXPECT_NEAR(errors[1].relative(), 0.5, 1e-4);
  const std::string table = testing::gradient_errors_table(errors);
  EXPECT_NE(table.find("conv1.weight"), std::string::npos) << table;
  // The bias is off by half its largest gradient: the worst, although its error is ten times smaller.
  EXPECT_NE(table.find("conv1.bias"), std::string::npos) << table;
  EXPECT_NE(table.find("<- worst"), std::string::npos) << table;
  EXPECT_GT(table.find("<- worst"), table.find("conv1.bias")) << table;
}

}  // namespace
}  // namespace dtbench
