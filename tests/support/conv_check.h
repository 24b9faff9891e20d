#pragma once
// Checks a convolution kernel (forward, input gradient, filter gradient) against the im2col +
// sgemm reference (core/kernels/conv_gemm.h), for tests of the faster paths.
//
// Tolerance: both paths round in fp32, in different orders. For an output y = Σ_i a_i·b_i the
// rounding error of either is bounded by a small multiple of ε·Σ_i |a_i·b_i| (ε = 2^-24): sgemm
// sums in blocks, the direct loops in 8 or 32 lanes, and Winograd's transforms add at most 4
// terms with weights ½ and 1 on each side before and after the product, which multiplies the
// bound by a constant, not by the number of terms. So each element is compared against
// kConvRelative · (the same convolution of |a| and |b|), the sum of the magnitudes it adds up,
// computed by the reference path on absolute values. A wrong tap, a wrong tile edge or a missed
// channel gives errors of the order of that magnitude itself, 10^4 times the tolerance.
#include <gtest/gtest.h>

#include <functional>

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/kernels/conv_gemm.h"
#include "core/tensor/tensor.h"
#include "support/gradcheck.h"

namespace dtbench::testing {

constexpr double kConvRelative = 1e-4;  // about 2^10 ε: far above fp32 rounding, far below a bug

using ConvForwardKernel = void (*)(float*, const float*, const float*, const float*, const ConvSizes&);
using ConvBackwardKernel = void (*)(float*, float*, float*, const float*, const float*, const float*,
                                    const ConvSizes&);

inline ConvSizes conv_sizes(int64_t batch, int64_t channels, int64_t height, int64_t width,
                            int64_t out_channels, int64_t kernel, int64_t padding) {
  ConvSizes sizes{.batch = batch,
                  .in_channels = channels,
                  .height = height,
                  .width = width,
                  .out_channels = out_channels,
                  .kernel = kernel,
                  .stride = 1,
                  .padding = padding};
  sizes.out_height = height + 2 * padding - kernel + 1;
  sizes.out_width = width + 2 * padding - kernel + 1;
  return sizes;
}

inline std::string describe(const ConvSizes& s) {
  return fmt::format("B{} C{} {}x{} -> {} k{} p{}", s.batch, s.in_channels, s.height, s.width, s.out_channels,
                     s.kernel, s.padding);
}

inline Tensor absolute(const Tensor& t) {
  Tensor result(t.shape());
  std::transform(t.data(), t.data() + t.numel(), result.data(), [](float v) { return std::abs(v); });
  return result;
}

inline void expect_within(const Tensor& actual, const Tensor& reference, const Tensor& magnitude,
                          const char* what) {
  ASSERT_EQ(actual.numel(), reference.numel());
  int mismatches = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double error = std::abs(double(actual.data()[i]) - reference.data()[i]);
    const double bound = kConvRelative * magnitude.data()[i] + 1e-30;
    if (error > bound && ++mismatches <= 5) {
      ADD_FAILURE() << what << " element " << i << ": " << actual.data()[i] << " vs reference "
                    << reference.data()[i] << " (bound " << bound << ")";
    }
  }
  EXPECT_EQ(mismatches, 0) << what;
}

// Forward (with bias), both gradients together, and each gradient alone (bench ops times them
// apart: it must be the same, bit for bit), against conv2d_forward / conv2d_backward.
inline void expect_conv_matches_reference(ConvForwardKernel forward, ConvBackwardKernel backward,
                                          const ConvSizes& s, uint64_t seed) {
  const Tensor x = random_tensor({s.batch, s.in_channels, s.height, s.width}, seed);
  const Tensor w = random_tensor({s.out_channels, s.in_channels, s.kernel, s.kernel}, seed + 1);
  const Tensor b = random_tensor({s.out_channels}, seed + 2);
  const Tensor dy = random_tensor({s.batch, s.out_channels, s.out_height, s.out_width}, seed + 3);
  const Tensor ax = absolute(x), aw = absolute(w), ady = absolute(dy), ab = absolute(b);

  Tensor y(dy.shape()), y_ref(dy.shape()), y_mag(dy.shape());
  forward(y.data(), x.data(), w.data(), b.data(), s);
  conv2d_forward(y_ref.data(), x.data(), w.data(), b.data(), s);
  conv2d_forward(y_mag.data(), ax.data(), aw.data(), ab.data(), s);
  expect_within(y, y_ref, y_mag, "forward");

  Tensor dx(x.shape()), dx_ref(x.shape()), dx_mag(x.shape());
  Tensor dw(w.shape()), dw_ref(w.shape()), dw_mag(w.shape());
  Tensor db(b.shape()), db_ref(b.shape());
  backward(dx.data(), dw.data(), db.data(), dy.data(), x.data(), w.data(), s);
  conv2d_backward(dx_ref.data(), dw_ref.data(), db_ref.data(), dy.data(), x.data(), w.data(), s);
  conv2d_backward(dx_mag.data(), dw_mag.data(), nullptr, ady.data(), ax.data(), aw.data(), s);
  expect_within(dx, dx_ref, dx_mag, "input gradient");
  expect_within(dw, dw_ref, dw_mag, "filter gradient");
  for (int64_t o = 0; o < s.out_channels; ++o) EXPECT_EQ(db.data()[o], db_ref.data()[o]) << o;

  Tensor dx_alone(x.shape()), dw_alone(w.shape());
  backward(dx_alone.data(), nullptr, nullptr, dy.data(), x.data(), w.data(), s);
  backward(nullptr, dw_alone.data(), nullptr, dy.data(), x.data(), w.data(), s);
  for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_EQ(dx_alone.data()[i], dx.data()[i]) << i;
  for (int64_t i = 0; i < dw.numel(); ++i) ASSERT_EQ(dw_alone.data()[i], dw.data()[i]) << i;
}

// Holds OpenBLAS (and so the convolutions' threads) at a thread count for a scope.
class BlasThreads {
 public:
  explicit BlasThreads(int threads) : saved_(openblas_get_num_threads()) {
    openblas_set_num_threads(threads);
  }
  ~BlasThreads() { openblas_set_num_threads(saved_); }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int saved_;
};

// The cases split their batches every way a kernel's sample grouping can: one sample per group
// (of a batch of several), groups of several samples, and a short last group.
inline void expect_every_grouping(const std::vector<ConvSizes>& cases,
                                  const std::function<int64_t(const ConvSizes&)>& group_size) {
  bool single = false, grouped = false, short_last = false;
  for (const ConvSizes& s : cases) {
    const int64_t group = group_size(s);
    EXPECT_GE(group, 1);
    EXPECT_LE(group, s.batch);
    single |= s.batch > 1 && group == 1;
    grouped |= group > 1;
    short_last |= group > 1 && s.batch % group != 0;
  }
  EXPECT_TRUE(single && grouped && short_last) << single << grouped << short_last;
}

// Every case against the reference at `threads` BLAS threads, each case with seeds of its own
// from `seed` on; `name` says which case a failure is in.
inline void expect_cases_match_reference(ConvForwardKernel forward, ConvBackwardKernel backward,
                                         const std::vector<ConvSizes>& cases, int threads, uint64_t seed,
                                         const std::function<std::string(const ConvSizes&)>& name = describe) {
  const BlasThreads blas(threads);
  for (const ConvSizes& s : cases) {
    SCOPED_TRACE(name(s));
    expect_conv_matches_reference(forward, backward, s, seed += 10);
  }
}

}  // namespace dtbench::testing
