// The direct convolution (core/kernels/conv_direct.h) against the im2col + sgemm reference
// (conv_gemm.h): forward, input gradient and filter gradient on random stride-1 shapes, at one
// and two threads, within the fp32 rounding bound that support/conv_check.h explains.
#include <gtest/gtest.h>

#include "core/kernels/conv_direct.h"
#include "support/conv_check.h"

namespace dtbench {
namespace {

using testing::BlasThreads;
using testing::conv_sizes;

// LeNet-5's layers and others: 5x5 (the unrolled row of taps), 3x3, and other sizes (the general
// loop); planes whose wide rows fill a chunk exactly or leave a part; padding 0 to 2; one sample
// and several; 1 to 16 channels.
const std::vector<ConvSizes>& cases() {
  static const std::vector<ConvSizes> all = {
      conv_sizes(4, 1, 28, 28, 6, 5, 2),  conv_sizes(3, 3, 32, 32, 6, 5, 0),
      conv_sizes(3, 6, 14, 14, 16, 5, 0), conv_sizes(1, 2, 7, 9, 3, 3, 1),
      conv_sizes(2, 3, 5, 5, 2, 1, 0),    conv_sizes(5, 2, 11, 6, 2, 4, 2),
      conv_sizes(2, 1, 9, 13, 1, 7, 3),   conv_sizes(1, 4, 6, 6, 4, 2, 0),
      conv_sizes(3, 1, 8, 8, 5, 8, 0),
  };
  return all;
}

TEST(ConvDirect, MatchesIm2colOnOneThread) {
  testing::expect_cases_match_reference(conv2d_direct_forward, conv2d_direct_backward, cases(), 1, 3000);
}

TEST(ConvDirect, MatchesIm2colOnTwoThreads) {
  testing::expect_cases_match_reference(conv2d_direct_forward, conv2d_direct_backward, cases(), 2, 4000);
}

// The path applies to few channels (1 or 3 -> 6), not to 6 -> 16 or strided layers. (Conv2d asks
// the lane-interleaved kernel first, which takes LeNet-5's layers; this one keeps larger planes.)
TEST(ConvDirect, AppliesToStrideOneWithFewChannels) {
  EXPECT_TRUE(conv2d_direct_applies(conv_sizes(64, 1, 28, 28, 6, 5, 2)));
  EXPECT_TRUE(conv2d_direct_applies(conv_sizes(64, 3, 32, 32, 6, 5, 0)));
  EXPECT_FALSE(conv2d_direct_applies(conv_sizes(64, 6, 14, 14, 16, 5, 0)));
  ConvSizes strided = conv_sizes(2, 1, 8, 8, 6, 3, 1);
  strided.stride = 2;
  EXPECT_FALSE(conv2d_direct_applies(strided));
}

}  // namespace
}  // namespace dtbench
