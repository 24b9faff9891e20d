// The finite check every gradient and update passes: Inf and NaN of either sign found wherever they
// sit (the vectorised body and the scalar tail alike), the extremes of the finite floats never.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "paramserver/finite_check.h"

namespace dtbench {
namespace {

using Limits = std::numeric_limits<float>;

TEST(FiniteCheck, FindsEveryInfAndNanWhereverItSits) {
  const float bad[] = {Limits::infinity(), -Limits::infinity(), Limits::quiet_NaN(), -Limits::quiet_NaN(),
                       Limits::signaling_NaN()};
  for (const float value : bad) {
    for (size_t length = 1; length <= 67; ++length) {
      for (size_t at = 0; at < length; ++at) {
        std::vector<float> values(length, 1.5f);
        values[at] = value;
        EXPECT_TRUE(any_non_finite(values)) << value << " at " << at << " of " << length;
        EXPECT_EQ(first_non_finite(values), static_cast<int64_t>(at)) << value << " at " << at << " of " << length;
      }
    }
  }
}

TEST(FiniteCheck, FiniteExtremesAreFinite) {
  const std::vector<float> values = {Limits::max(),        -Limits::max(), Limits::min(), Limits::denorm_min(),
                                     -Limits::denorm_min(), 0.0f,          -0.0f,         Limits::epsilon(),
                                     1e38f,                 -1e-38f,       3.0f};
  for (const float value : values) ASSERT_TRUE(std::isfinite(value)) << value;  // the oracle agrees
  EXPECT_FALSE(any_non_finite(values));
  EXPECT_EQ(first_non_finite(values), -1);
  EXPECT_EQ(first_non_finite({}), -1);
}

// The first of several is the one named.
TEST(FiniteCheck, NamesTheFirstOfSeveral) {
  std::vector<float> values(100, -2.0f);
  values[70] = Limits::infinity();
  values[40] = Limits::quiet_NaN();
  EXPECT_EQ(first_non_finite(values), 40);
}

}  // namespace
}  // namespace dtbench
