// The summing cost the cost model charges per received byte, timed on this machine.
#include <gtest/gtest.h>

#include "core/tuning/summing_speed.h"

namespace dtbench {
namespace {

TEST(SummingSpeed, IsPositiveAndBelowAMicrosecondPerByte) {
  const double cost = measure_summing_s_per_byte();
  EXPECT_GT(cost, 0.0);
  EXPECT_LT(cost, 1e-6);
}

}  // namespace
}  // namespace dtbench
