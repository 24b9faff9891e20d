// The lane-interleaved direct convolution (core/kernels/conv_lanes.h) against the im2col + sgemm
// reference (conv_gemm.h): forward, input gradient and filter gradient on random stride-1 shapes,
// at one and two threads, within the fp32 rounding bound that support/conv_check.h explains.
#include <gtest/gtest.h>

#include "core/kernels/conv_lanes.h"
#include "support/conv_check.h"

namespace dtbench {
namespace {

using testing::conv_sizes;

// LeNet-5's layers and others: batches that fill their groups of eight or leave lanes
// empty (1, 3, 9, 16); 5x5 and 3x3 filters (unrolled rows of taps) and 2x2, 4x4, 7x7 (the general
// loop); rows of 1 to 13 outputs (whole blocks of six and every remainder); padding 0 to 3.
const std::vector<ConvSizes>& cases() {
  static const std::vector<ConvSizes> all = {
      conv_sizes(16, 6, 14, 14, 16, 5, 0), conv_sizes(9, 3, 8, 11, 5, 3, 1), conv_sizes(1, 2, 7, 9, 3, 3, 1),
      conv_sizes(3, 4, 6, 6, 4, 2, 0),     conv_sizes(5, 2, 11, 6, 2, 4, 2), conv_sizes(2, 1, 9, 13, 1, 7, 3),
      conv_sizes(8, 5, 5, 5, 7, 5, 2),     conv_sizes(3, 6, 5, 6, 16, 5, 0), conv_sizes(9, 3, 32, 32, 6, 5, 0),
      conv_sizes(4, 1, 28, 28, 6, 5, 2),
  };
  return all;
}

TEST(ConvLanes, MatchesIm2colOnOneThread) {
  testing::expect_cases_match_reference(conv2d_lanes_forward, conv2d_lanes_backward, cases(), 1, 3100);
}

TEST(ConvLanes, MatchesIm2colOnTwoThreads) {
  testing::expect_cases_match_reference(conv2d_lanes_forward, conv2d_lanes_backward, cases(), 2, 4100);
}

// Conv2d takes the path for LeNet-5's layers (on CIFAR and on MNIST), not for layers with more
// channel pairs (ResNet's and VGG's 3 -> 64 stems, sgemm's long products), large planes, 1x1
// filters or strides.
TEST(ConvLanes, AppliesToLeNetsLayersNotToStemsLargePlanesOrStrides) {
  EXPECT_TRUE(conv2d_lanes_applies(conv_sizes(64, 3, 32, 32, 6, 5, 0)));
  EXPECT_TRUE(conv2d_lanes_applies(conv_sizes(64, 1, 28, 28, 6, 5, 2)));
  EXPECT_TRUE(conv2d_lanes_applies(conv_sizes(64, 6, 14, 14, 16, 5, 0)));
  EXPECT_FALSE(conv2d_lanes_applies(conv_sizes(64, 3, 32, 32, 64, 3, 1)));
  EXPECT_FALSE(conv2d_lanes_applies(conv_sizes(64, 64, 8, 8, 64, 3, 1)));
  EXPECT_FALSE(conv2d_lanes_applies(conv_sizes(64, 1, 64, 64, 6, 5, 2)));
  EXPECT_FALSE(conv2d_lanes_applies(conv_sizes(64, 8, 8, 8, 8, 1, 0)));
  ConvSizes strided = conv_sizes(2, 6, 14, 14, 16, 5, 0);
  strided.stride = 2;
  EXPECT_FALSE(conv2d_lanes_applies(strided));
}

}  // namespace
}  // namespace dtbench
