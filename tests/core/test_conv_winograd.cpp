// The Winograd F(2x2, 3x3) convolution (core/kernels/conv_winograd.h) against the im2col + sgemm
// reference (conv_gemm.h): forward, input gradient and filter gradient on random shapes, at one
// and two threads.
//
// Tolerance: both paths round in fp32, in different orders. For an output y = Σ_i a_i·b_i the
// rounding error of either is bounded by a small multiple of ε·Σ_i |a_i·b_i| (ε = 2^-24): the
// products are summed by sgemm in blocks, and Winograd's transforms add at most 4 terms with
// weights ½ and 1 on each side before and after the product, which multiplies the bound by a
// constant, not by the number of terms. So each element is compared against
// kRelative · (the same convolution of |a| and |b|), the sum of the magnitudes it adds up,
// computed by the reference path on absolute values. A wrong tap, a wrong tile edge or a missed
// channel gives errors of the order of that magnitude itself, 10^4 times the tolerance.
#include <gtest/gtest.h>

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/kernels/conv_gemm.h"
#include "core/kernels/conv_winograd.h"
#include "core/tensor/tensor.h"
#include "support/gradcheck.h"

namespace dtbench {
namespace {

using testing::random_tensor;

constexpr double kRelative = 1e-4;  // about 2^10 ε: far above fp32 rounding, far below a bug

ConvSizes conv_sizes(int64_t batch, int64_t channels, int64_t height, int64_t width,
                     int64_t out_channels, int64_t padding) {
  ConvSizes sizes{.batch = batch,
                  .in_channels = channels,
                  .height = height,
                  .width = width,
                  .out_channels = out_channels,
                  .kernel = 3,
                  .stride = 1,
                  .padding = padding};
  sizes.out_height = height + 2 * padding - 2;
  sizes.out_width = width + 2 * padding - 2;
  return sizes;
}

std::string describe(const ConvSizes& s) {
  return "B" + std::to_string(s.batch) + " C" + std::to_string(s.in_channels) + " " +
         std::to_string(s.height) + "x" + std::to_string(s.width) + " -> " +
         std::to_string(s.out_channels) + " p" + std::to_string(s.padding);
}

Tensor absolute(const Tensor& t) {
  Tensor result(t.shape());
  std::transform(t.data(), t.data() + t.numel(), result.data(), [](float v) { return std::abs(v); });
  return result;
}

void expect_within(const Tensor& actual, const Tensor& reference, const Tensor& magnitude,
                   const char* what) {
  ASSERT_EQ(actual.numel(), reference.numel());
  int mismatches = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double error = std::abs(double(actual.data()[i]) - reference.data()[i]);
    const double bound = kRelative * magnitude.data()[i] + 1e-30;
    if (error > bound && ++mismatches <= 5) {
      ADD_FAILURE() << what << " element " << i << ": " << actual.data()[i] << " vs reference "
                    << reference.data()[i] << " (bound " << bound << ")";
    }
  }
  EXPECT_EQ(mismatches, 0) << what;
}

// Odd and even planes, padding 0, 1 and 2, one sample and several (groups of several samples, a
// short last group), channel counts from 1 to 64.
const std::vector<ConvSizes>& cases() {
  static const std::vector<ConvSizes> all = {
      conv_sizes(1, 1, 5, 5, 1, 1),     conv_sizes(2, 3, 7, 9, 4, 1),
      conv_sizes(3, 2, 8, 8, 5, 0),     conv_sizes(1, 5, 9, 6, 3, 0),
      conv_sizes(4, 16, 4, 4, 8, 1),    conv_sizes(5, 8, 11, 13, 16, 1),
      conv_sizes(2, 4, 6, 7, 2, 2),     conv_sizes(3, 64, 5, 5, 32, 1),
      conv_sizes(37, 6, 8, 8, 6, 1),    conv_sizes(2, 3, 47, 50, 5, 1),
      conv_sizes(9, 32, 3, 3, 16, 1),   conv_sizes(1, 2, 3, 3, 2, 0),
  };
  return all;
}

struct Tensors {
  Tensor x, w, b, dy;
};

Tensors random_operands(const ConvSizes& s, uint64_t seed) {
  return {random_tensor({s.batch, s.in_channels, s.height, s.width}, seed),
          random_tensor({s.out_channels, s.in_channels, 3, 3}, seed + 1),
          random_tensor({s.out_channels}, seed + 2),
          random_tensor({s.batch, s.out_channels, s.out_height, s.out_width}, seed + 3)};
}

void check_case(const ConvSizes& s, uint64_t seed) {
  SCOPED_TRACE(describe(s) + ", group " + std::to_string(conv2d_winograd_group_size(s)));
  const Tensors t = random_operands(s, seed);
  const Tensor ax = absolute(t.x), aw = absolute(t.w), ady = absolute(t.dy), ab = absolute(t.b);
  const Shape y_shape = t.dy.shape();

  Tensor y(y_shape), y_ref(y_shape), y_mag(y_shape);
  conv2d_winograd_forward(y.data(), t.x.data(), t.w.data(), t.b.data(), s);
  conv2d_forward(y_ref.data(), t.x.data(), t.w.data(), t.b.data(), s);
  conv2d_forward(y_mag.data(), ax.data(), aw.data(), ab.data(), s);
  expect_within(y, y_ref, y_mag, "forward");

  Tensor dx(t.x.shape()), dx_ref(t.x.shape()), dx_mag(t.x.shape());
  Tensor dw(t.w.shape()), dw_ref(t.w.shape()), dw_mag(t.w.shape());
  Tensor db(t.b.shape()), db_ref(t.b.shape());
  conv2d_winograd_backward(dx.data(), dw.data(), db.data(), t.dy.data(), t.x.data(), t.w.data(), s);
  conv2d_backward(dx_ref.data(), dw_ref.data(), db_ref.data(), t.dy.data(), t.x.data(), t.w.data(), s);
  conv2d_backward(dx_mag.data(), dw_mag.data(), nullptr, ady.data(), ax.data(), aw.data(), s);
  expect_within(dx, dx_ref, dx_mag, "input gradient");
  expect_within(dw, dw_ref, dw_mag, "filter gradient");
  for (int64_t o = 0; o < s.out_channels; ++o) EXPECT_EQ(db.data()[o], db_ref.data()[o]) << o;

  // Each gradient alone is the same as both together (bench ops times them apart).
  Tensor dx_alone(t.x.shape()), dw_alone(t.w.shape());
  conv2d_winograd_backward(dx_alone.data(), nullptr, nullptr, t.dy.data(), t.x.data(), t.w.data(), s);
  conv2d_winograd_backward(nullptr, dw_alone.data(), nullptr, t.dy.data(), t.x.data(), t.w.data(), s);
  for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_EQ(dx_alone.data()[i], dx.data()[i]) << i;
  for (int64_t i = 0; i < dw.numel(); ++i) ASSERT_EQ(dw_alone.data()[i], dw.data()[i]) << i;
}

// Holds OpenBLAS (and so the convolutions' group threads) at a thread count for a scope.
class BlasThreads {
 public:
  explicit BlasThreads(int threads) : saved_(openblas_get_num_threads()) {
    openblas_set_num_threads(threads);
  }
  ~BlasThreads() { openblas_set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(ConvWinograd, MatchesIm2colOnOneThread) {
  const BlasThreads threads(1);
  uint64_t seed = 1000;
  for (const ConvSizes& s : cases()) check_case(s, seed += 10);
}

TEST(ConvWinograd, MatchesIm2colOnTwoThreads) {
  const BlasThreads threads(2);
  uint64_t seed = 2000;
  for (const ConvSizes& s : cases()) check_case(s, seed += 10);
}

TEST(ConvWinograd, CasesCoverEveryGrouping) {
  const BlasThreads threads(1);
  bool single = false, grouped = false, short_last = false;
  for (const ConvSizes& s : cases()) {
    const int64_t group = conv2d_winograd_group_size(s);
    EXPECT_GE(group, 1);
    EXPECT_LE(group, s.batch);
    single |= s.batch > 1 && group == 1;
    grouped |= group > 1;
    short_last |= group > 1 && s.batch % group != 0;
  }
  EXPECT_TRUE(single && grouped && short_last) << single << grouped << short_last;
}

// Conv2d takes the path for ResNet's 3x3 stride-1 layers, not for its 3-channel stem (too thin a
// product), strided or other kernels.
TEST(ConvWinograd, AppliesToThreeByThreeStrideOneWithEnoughChannels) {
  EXPECT_TRUE(conv2d_winograd_applies(conv_sizes(2, 64, 8, 8, 64, 1)));
  EXPECT_FALSE(conv2d_winograd_applies(conv_sizes(2, 3, 32, 32, 64, 1)));
  ConvSizes strided = conv_sizes(2, 64, 8, 8, 64, 1);
  strided.stride = 2;
  EXPECT_FALSE(conv2d_winograd_applies(strided));
  ConvSizes five = conv_sizes(2, 64, 8, 8, 64, 1);
  five.kernel = 5;
  EXPECT_FALSE(conv2d_winograd_applies(five));
}

}  // namespace
}  // namespace dtbench
