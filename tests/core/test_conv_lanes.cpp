// The lane-interleaved direct convolution (core/kernels/conv_lanes.h) against the im2col + sgemm
// reference (conv_gemm.h): forward, input gradient and filter gradient on random stride-1 shapes,
// at one and two threads, within the fp32 rounding bound that support/conv_check.h explains; the
// sixteen-lane kernels the same way (and against the eight-lane forward), where the CPU runs them.
#include <gtest/gtest.h>

#include <vector>

#include "core/kernels/conv_lanes.h"
#include "core/util/rng.h"
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

// Sixteen lanes (AVX-512F), where this CPU has it: the same reference, with batches that fill
// groups of sixteen (16, 32), leave lanes empty (1, 3, 9, 17, 21) or fit in one group of eight.
const std::vector<ConvSizes>& sixteen_lane_cases() {
  static const std::vector<ConvSizes> all = [] {
    std::vector<ConvSizes> both = cases();
    for (const ConvSizes& s : {conv_sizes(32, 6, 14, 14, 16, 5, 0), conv_sizes(17, 3, 9, 12, 5, 3, 1),
                               conv_sizes(21, 2, 10, 7, 3, 4, 2), conv_sizes(33, 3, 32, 32, 6, 5, 0)}) {
      both.push_back(s);
    }
    return both;
  }();
  return all;
}

TEST(ConvLanes, SixteenLanesMatchIm2colOnOneAndTwoThreads) {
  if (!lanes16_runs_here()) GTEST_SKIP() << "this CPU has no AVX-512F: the sixteen-lane kernels cannot run here";
  testing::expect_cases_match_reference(conv2d_lanes16_forward, conv2d_lanes16_backward, sixteen_lane_cases(), 1,
                                        5100);
  testing::expect_cases_match_reference(conv2d_lanes16_forward, conv2d_lanes16_backward, sixteen_lane_cases(), 2,
                                        5200);
}

// Each lane sums its own sample's products in the same order at either width, so the forward
// outputs are equal bit for bit (the filter gradient sums lanes, in another order, and is not).
TEST(ConvLanes, SixteenLanesGiveTheEightLanesForwardBitForBit) {
  if (!lanes16_runs_here()) GTEST_SKIP() << "this CPU has no AVX-512F: the sixteen-lane kernels cannot run here";
  const testing::BlasThreads threads(1);
  for (const ConvSizes& s : sixteen_lane_cases()) {
    SCOPED_TRACE(testing::describe(s));
    Rng rng(77);
    std::vector<float> inp(static_cast<size_t>(s.batch * s.in_channels * s.in_plane()));
    std::vector<float> weight(static_cast<size_t>(s.out_channels * s.in_channels * s.kernel * s.kernel));
    std::vector<float> bias(static_cast<size_t>(s.out_channels));
    for (auto* values : {&inp, &weight, &bias}) {
      for (float& v : *values) v = rng.uniform(-1.0f, 1.0f);
    }
    const size_t outputs = static_cast<size_t>(s.batch * s.out_channels * s.out_plane());
    std::vector<float> eight(outputs), sixteen(outputs);
    conv2d_lanes_forward(eight.data(), inp.data(), weight.data(), bias.data(), s);
    conv2d_lanes16_forward(sixteen.data(), inp.data(), weight.data(), bias.data(), s);
    ASSERT_EQ(eight, sixteen);
  }
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
