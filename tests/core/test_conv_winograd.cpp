// The Winograd F(2x2, 3x3) and F(4x4, 3x3) convolutions (core/kernels/conv_winograd.h) against
// the im2col + sgemm reference (conv_gemm.h): forward, input gradient and filter gradient on
// random shapes, at one and two threads, within the fp32 rounding bound that support/conv_check.h
// explains.
#include <gtest/gtest.h>

#include "core/kernels/conv_winograd.h"
#include "support/conv_check.h"

namespace dtbench {
namespace {

using testing::BlasThreads;
using testing::conv_sizes;

// Odd and even planes, padding 0, 1 and 2, one sample and several (one sample per group, groups
// of several samples, a short last group), channel counts from 1 to 64; rows of tiles that the
// vector transforms take eight at a time (F(2x2, 3x3): 25 and 16 tiles; F(4x4, 3x3): 13 and 8) and
// those too short for them.
const std::vector<ConvSizes>& cases() {
  static const std::vector<ConvSizes> all = {
      conv_sizes(1, 1, 5, 5, 1, 3, 1),    conv_sizes(2, 3, 7, 9, 4, 3, 1),
      conv_sizes(3, 2, 8, 8, 5, 3, 0),    conv_sizes(1, 5, 9, 6, 3, 3, 0),
      conv_sizes(4, 16, 4, 4, 8, 3, 1),   conv_sizes(5, 8, 11, 13, 16, 3, 1),
      conv_sizes(2, 4, 6, 7, 2, 3, 2),    conv_sizes(3, 64, 5, 5, 32, 3, 1),
      conv_sizes(37, 6, 8, 8, 6, 3, 1),   conv_sizes(2, 3, 47, 50, 5, 3, 1),
      conv_sizes(9, 32, 3, 3, 16, 3, 1),  conv_sizes(1, 2, 3, 3, 2, 3, 0),
      conv_sizes(2, 4, 32, 32, 3, 3, 1),
      // F(4x4, 3x3)'s tiles are a quarter as many: a sample per group, and a short last group.
      conv_sizes(2, 64, 48, 48, 64, 3, 1), conv_sizes(29, 16, 24, 24, 16, 3, 1),
  };
  return all;
}

std::string case_name(const ConvSizes& s) {
  return testing::describe(s) + ", group " + std::to_string(conv2d_winograd_group_size(s));
}

TEST(ConvWinograd, MatchesIm2colOnOneThread) {
  testing::expect_cases_match_reference(conv2d_winograd_forward, conv2d_winograd_backward, cases(), 1, 1000,
                                        case_name);
}

TEST(ConvWinograd, MatchesIm2colOnTwoThreads) {
  testing::expect_cases_match_reference(conv2d_winograd_forward, conv2d_winograd_backward, cases(), 2, 2000,
                                        case_name);
}

TEST(ConvWinograd, CasesCoverEveryGrouping) {
  const BlasThreads threads(1);
  testing::expect_every_grouping(cases(), conv2d_winograd_group_size);
}

std::string case_name4(const ConvSizes& s) {
  return testing::describe(s) + ", group " + std::to_string(conv2d_winograd4_group_size(s));
}

TEST(ConvWinograd4, MatchesIm2colOnOneThread) {
  testing::expect_cases_match_reference(conv2d_winograd4_forward, conv2d_winograd4_backward, cases(), 1,
                                        3000, case_name4);
}

TEST(ConvWinograd4, MatchesIm2colOnTwoThreads) {
  testing::expect_cases_match_reference(conv2d_winograd4_forward, conv2d_winograd4_backward, cases(), 2,
                                        4000, case_name4);
}

TEST(ConvWinograd4, CasesCoverEveryGrouping) {
  const BlasThreads threads(1);
  testing::expect_every_grouping(cases(), conv2d_winograd4_group_size);
}

// Conv2d takes the path for ResNet's 3x3 stride-1 layers, not for its 3-channel stem (too thin a
// product), strided or other kernels.
TEST(ConvWinograd, AppliesToThreeByThreeStrideOneWithEnoughChannels) {
  EXPECT_TRUE(conv2d_winograd_applies(conv_sizes(2, 64, 8, 8, 64, 3, 1)));
  EXPECT_FALSE(conv2d_winograd_applies(conv_sizes(2, 3, 32, 32, 64, 3, 1)));
  ConvSizes strided = conv_sizes(2, 64, 8, 8, 64, 3, 1);
  strided.stride = 2;
  EXPECT_FALSE(conv2d_winograd_applies(strided));
  ConvSizes five = conv_sizes(2, 64, 8, 8, 64, 3, 1);
  five.kernel = 5;
  EXPECT_FALSE(conv2d_winograd_applies(five));
}

}  // namespace
}  // namespace dtbench
