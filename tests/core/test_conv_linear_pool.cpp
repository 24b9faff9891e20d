// Linear, Conv2d and the pooling layers: forward against plain nested-loop references, backward
// against central finite differences, and misfit inputs rejected at configure time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/kernels/conv_gemm.h"
#include "core/kernels/conv_winograd.h"
#include "core/layers/conv2d.h"
#include "core/layers/linear.h"
#include "core/layers/pooling.h"
#include "core/util/error.h"
#include "core/util/rng.h"
#include "support/conv_check.h"
#include "support/gradcheck.h"

namespace dtbench {
namespace {

using testing::bind_params;
using testing::expect_gradients_match;
using testing::random_tensor;

std::vector<Param*> params_of(Layer& layer) {
  std::vector<Param*> params;
  layer.collect_params(params);
  return params;
}

void expect_close(const Tensor& actual, const std::vector<double>& expected, double tolerance) {
  ASSERT_EQ(actual.numel(), static_cast<int64_t>(expected.size()));
  int mismatches = 0;
  for (int64_t i = 0; i < actual.numel(); ++i) {
    const double error = std::abs(actual.data()[i] - expected[i]);
    if (error > tolerance * (1.0 + std::abs(expected[i])) && ++mismatches <= 5) {
      ADD_FAILURE() << "element " << i << ": got " << actual.data()[i] << " expected "
                    << expected[i];
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// Runs one forward/backward on a different batch size first, so the layer's buffers hold stale
// values and have been resized, then fills the gradient arena with garbage: a backward that
// accumulates instead of writing, or forgets to clear a buffer, then fails the gradient check.
void check_gradients(Layer& layer, ParamArena& arena, const Tensor& input,
                     const testing::GradcheckOptions& options = {}) {
  Shape warm_shape = input.shape();
  warm_shape[0] += 2;
  Tensor warm = random_tensor(warm_shape, 4242);
  Tensor warm_grad = random_tensor(layer.forward(warm, Mode::Train).shape(), 4243);
  layer.backward(warm_grad);
  std::fill(arena.grads().begin(), arena.grads().end(), 123.0f);
  expect_gradients_match(layer, input, options);
}

// ---------------------------------------------------------------------------------------------
// Linear

std::vector<double> naive_linear(const Tensor& x, const float* w, const float* b, int64_t out) {
  const int64_t batch = x.dim(0), in = x.numel() / batch;
  std::vector<double> y(static_cast<size_t>(batch * out));
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t o = 0; o < out; ++o) {
      double sum = b[o];
      for (int64_t i = 0; i < in; ++i) sum += double(x.data()[n * in + i]) * w[o * in + i];
      y[static_cast<size_t>(n * out + o)] = sum;
    }
  }
  return y;
}

struct LinearCase {
  Shape input;  // with the batch
  int64_t out;
};

TEST(Linear, ForwardMatchesReferenceAndGradientsMatchFiniteDifferences) {
  const std::vector<LinearCase> cases = {
      {{1, 7}, 3}, {{3, 2, 3, 4}, 5}, {{4, 16}, 10}, {{2, 1}, 1}};
  uint64_t seed = 1;
  for (const LinearCase& c : cases) {
    SCOPED_TRACE(shape_string(c.input) + " -> " + std::to_string(c.out));
    const Shape sample(c.input.begin() + 1, c.input.end());
    Linear layer(element_count(sample), c.out);
    EXPECT_EQ(layer.configure(sample), (Shape{c.out}));
    EXPECT_EQ(layer.macs_per_sample(), element_count(sample) * c.out);
    ParamArena arena = bind_params(layer, ++seed);
    const auto params = params_of(layer);
    ASSERT_EQ(params.size(), 2u);
    EXPECT_EQ(params[0]->name, "weight");
    EXPECT_EQ(params[1]->name, "bias");
    const Tensor x = random_tensor(c.input, ++seed);
    const Tensor& y = layer.forward(x, Mode::Train);
    EXPECT_EQ(y.shape(), (Shape{c.input[0], c.out}));
    expect_close(y, naive_linear(x, params[0]->value, params[1]->value, c.out), 1e-5);
    check_gradients(layer, arena, random_tensor(c.input, ++seed));
  }
}

TEST(Linear, WeightGradientsWithoutInputGradient) {
  Linear layer(12, 4);
  layer.configure({12});
  layer.set_needs_input_grad(false);
  ParamArena arena = bind_params(layer, 5);
  check_gradients(layer, arena, random_tensor({3, 12}, 6));
}

TEST(Linear, RejectsMisfitInput) {
  Linear layer(12, 4);
  try {
    layer.configure({3, 5});
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("linear"), std::string::npos) << message;
    EXPECT_NE(message.find("12"), std::string::npos) << message;
    EXPECT_NE(message.find("(3, 5)"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(layer.configure({3, 4}));
}

// ---------------------------------------------------------------------------------------------
// Conv2d

struct ConvCase {
  int64_t batch, channels, height, width, out_channels, kernel, stride, padding;
  bool bias;
};

std::string describe(const ConvCase& c) {
  return fmt::format("B{} C{} {}x{} -> {} k{} s{} p{}{}", c.batch, c.channels, c.height, c.width,
                     c.out_channels, c.kernel, c.stride, c.padding, c.bias ? " bias" : "");
}

// y[n, o, oh, ow] = b[o] + Σ_{c, ki, kj} x[n, c, oh·s − p + ki, ow·s − p + kj] · w[o, c, ki, kj]
double naive_conv_at(const Tensor& x, const float* w, const float* b, const ConvCase& c,
                     int64_t n, int64_t o, int64_t oh, int64_t ow) {
  double sum = b != nullptr ? b[o] : 0.0;
  for (int64_t ch = 0; ch < c.channels; ++ch) {
    for (int64_t ki = 0; ki < c.kernel; ++ki) {
      for (int64_t kj = 0; kj < c.kernel; ++kj) {
        const int64_t ih = oh * c.stride - c.padding + ki;
        const int64_t iw = ow * c.stride - c.padding + kj;
        if (ih < 0 || ih >= c.height || iw < 0 || iw >= c.width) continue;
        sum += double(x.data()[((n * c.channels + ch) * c.height + ih) * c.width + iw]) *
               w[((o * c.channels + ch) * c.kernel + ki) * c.kernel + kj];
      }
    }
  }
  return sum;
}

std::vector<double> naive_conv(const Tensor& x, const float* w, const float* b, const ConvCase& c,
                               int64_t out_height, int64_t out_width) {
  std::vector<double> y;
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t o = 0; o < c.out_channels; ++o) {
      for (int64_t oh = 0; oh < out_height; ++oh) {
        for (int64_t ow = 0; ow < out_width; ++ow) y.push_back(naive_conv_at(x, w, b, c, n, o, oh, ow));
      }
    }
  }
  return y;
}

ConvSizes sizes_of(const ConvCase& c) {
  ConvSizes sizes{.batch = c.batch,
                  .in_channels = c.channels,
                  .height = c.height,
                  .width = c.width,
                  .out_channels = c.out_channels,
                  .kernel = c.kernel,
                  .stride = c.stride,
                  .padding = c.padding};
  sizes.out_height = (c.height + 2 * c.padding - c.kernel) / c.stride + 1;
  sizes.out_width = (c.width + 2 * c.padding - c.kernel) / c.stride + 1;
  return sizes;
}

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {1, 1, 5, 5, 1, 1, 1, 0, true},     // 1x1 stride 1, one sample: no unrolling at all
      {3, 4, 6, 5, 3, 1, 1, 0, false},    // 1x1 stride 1, samples grouped
      {2, 3, 7, 7, 2, 1, 2, 0, true},     // 1x1 stride 2 (a ResNet shortcut)
      {3, 2, 7, 9, 4, 3, 1, 1, true},     // 3x3 pad 1, non-square
      {2, 3, 9, 8, 5, 3, 2, 1, false},    // stride 2
      {3, 2, 11, 7, 3, 5, 2, 2, true},    // 5x5 stride 2 pad 2, odd sizes
      {1, 3, 8, 8, 2, 5, 1, 2, false},    // batch 1, 5x5 pad 2
      {2, 2, 8, 7, 3, 2, 3, 1, true},     // stride > kernel: some inputs unused
      {3, 5, 6, 6, 2, 5, 1, 0, false},    // kernel near the input size
      {3, 32, 4, 4, 16, 3, 1, 1, false},  // many channels, a small plane
      {2, 2, 34, 33, 3, 3, 1, 1, true},   // a large plane: one sample per sgemm
      {5, 2, 20, 20, 3, 3, 1, 1, false},  // groups of several samples, the last one short
      // Output rows of 16 or more are unrolled row by row, shorter ones through an offset table.
      {2, 2, 33, 35, 3, 3, 2, 1, false},  // long rows, stride 2
      {1, 2, 36, 40, 2, 5, 2, 2, true},   // long rows, 5x5 stride 2 pad 2
      {2, 1, 18, 21, 2, 5, 1, 2, true},   // long rows, 5x5 pad 2
      {2, 6, 14, 14, 16, 5, 1, 0, true},  // LeNet-5's second layer: im2col + sgemm, rows of 10
      {2, 6, 9, 9, 8, 5, 1, 0, false},    // im2col + sgemm with rows shorter than a vector
  };
  return cases;
}

TEST(Conv2d, CasesCoverEveryGrouping) {
  std::vector<ConvSizes> sizes;
  for (const ConvCase& c : conv_cases()) sizes.push_back(sizes_of(c));
  testing::expect_every_grouping(sizes, conv2d_group_size);
}

TEST(Conv2d, ForwardMatchesReference) {
  uint64_t seed = 100;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(describe(c));
    Conv2d layer(c.channels, c.out_channels, c.kernel, c.stride, c.padding, c.bias);
    const ConvSizes sizes = sizes_of(c);
    EXPECT_EQ(layer.configure({c.channels, c.height, c.width}),
              (Shape{c.out_channels, sizes.out_height, sizes.out_width}));
    EXPECT_EQ(layer.macs_per_sample(), c.out_channels * sizes.out_height * sizes.out_width *
                                           c.channels * c.kernel * c.kernel);
    ParamArena arena = bind_params(layer, ++seed);
    const auto params = params_of(layer);
    ASSERT_EQ(params.size(), c.bias ? 2u : 1u);
    const float* bias = c.bias ? params[1]->value : nullptr;
    // Twice, with a different batch in between, so reused buffers are exercised.
    for (int pass = 0; pass < 2; ++pass) {
      const Tensor x = random_tensor({c.batch, c.channels, c.height, c.width}, ++seed);
      const Tensor& y = layer.forward(x, Mode::Train);
      EXPECT_EQ(y.shape(), (Shape{c.batch, c.out_channels, sizes.out_height, sizes.out_width}));
      expect_close(y, naive_conv(x, params[0]->value, bias, c, sizes.out_height, sizes.out_width),
                   1e-5);
      layer.forward(random_tensor({c.batch + 3, c.channels, c.height, c.width}, ++seed),
                    Mode::Train);
    }
  }
}

TEST(Conv2d, GradientsMatchFiniteDifferences) {
  uint64_t seed = 200;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(describe(c));
    Conv2d layer(c.channels, c.out_channels, c.kernel, c.stride, c.padding, c.bias);
    layer.configure({c.channels, c.height, c.width});
    ParamArena arena = bind_params(layer, ++seed);
    check_gradients(layer, arena, random_tensor({c.batch, c.channels, c.height, c.width}, ++seed));
  }
}

TEST(Conv2d, WeightGradientsWithoutInputGradient) {
  for (const ConvCase& c : {ConvCase{3, 3, 9, 7, 4, 3, 1, 1, true},
                            ConvCase{2, 3, 6, 6, 2, 1, 1, 0, false}}) {
    SCOPED_TRACE(describe(c));
    Conv2d layer(c.channels, c.out_channels, c.kernel, c.stride, c.padding, c.bias);
    layer.configure({c.channels, c.height, c.width});
    layer.set_needs_input_grad(false);
    ParamArena arena = bind_params(layer, 7);
    check_gradients(layer, arena, random_tensor({c.batch, c.channels, c.height, c.width}, 8));
  }
}

// bench ops times the input gradient alone (no dweight): it must be the input gradient of the
// full backward, bit for bit, since it runs the same products on the same operands.
TEST(Conv2d, InputGradientAloneMatchesTheFullBackward) {
  uint64_t seed = 300;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(describe(c));
    const ConvSizes sizes = sizes_of(c);
    const Tensor x = random_tensor({c.batch, c.channels, c.height, c.width}, ++seed);
    const Tensor w = random_tensor({c.out_channels, c.channels, c.kernel, c.kernel}, ++seed);
    const Shape out_shape{c.batch, c.out_channels, sizes.out_height, sizes.out_width};
    const Tensor dy = random_tensor(out_shape, ++seed);
    Tensor dx_full(x.shape()), dx_alone(x.shape()), dw(w.shape());
    conv2d_backward(dx_full.data(), dw.data(), nullptr, dy.data(), x.data(), w.data(), sizes);
    conv2d_backward(dx_alone.data(), nullptr, nullptr, dy.data(), x.data(), w.data(), sizes);
    for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(dx_alone.data()[i], dx_full.data()[i]) << i;
  }
}

// A ResNet-sized layer, several samples per group. Spot-checks outputs, the input gradient by
// adjointness (⟨conv(x), g⟩ = ⟨x, conv^T(g)⟩, linear in x) and the workspace bound.
TEST(Conv2d, WideLayerMatchesReferenceAtSampledPoints) {
  const ConvCase c{64, 64, 8, 8, 64, 3, 1, 1, false};
  Conv2d layer(c.channels, c.out_channels, c.kernel, c.stride, c.padding, c.bias);
  layer.configure({c.channels, c.height, c.width});
  ParamArena arena = bind_params(layer, 9);
  const float* w = params_of(layer)[0]->value;
  const Tensor x = random_tensor({c.batch, c.channels, c.height, c.width}, 10);
  const Tensor& y = layer.forward(x, Mode::Train);
  Rng rng(11);
  for (int probe = 0; probe < 200; ++probe) {
    const int64_t index = static_cast<int64_t>(rng.below(static_cast<uint64_t>(y.numel())));
    const int64_t ow = index % 8, oh = index / 8 % 8, o = index / 64 % 64, n = index / 4096;
    const double expected = naive_conv_at(x, w, nullptr, c, n, o, oh, ow);
    EXPECT_NEAR(y.data()[index], expected, 1e-4 * (1.0 + std::abs(expected))) << index;
  }
  Tensor g = random_tensor(y.shape(), 12);
  const double forward_dot = testing::weighted_sum(y, g);
  const Tensor& dx = layer.backward(g);
  const double backward_dot = testing::weighted_sum(x, dx);
  EXPECT_NEAR(forward_dot, backward_dot, 1e-4 * std::abs(forward_dot) + 1e-2);
  // Σ_w w·dL/dw = ⟨y, g⟩ too (y is linear in w).
  const auto params = params_of(layer);
  double weight_dot = 0.0;
  for (int64_t i = 0; i < params[0]->numel(); ++i) weight_dot += double(w[i]) * params[0]->grad[i];
  EXPECT_NEAR(forward_dot, weight_dot, 1e-4 * std::abs(forward_dot) + 1e-2);
  // A 3x3 stride-1 layer of 64 channels runs by Winograd; its workspace stays bounded too.
  EXPECT_GT(conv2d_winograd_workspace_bytes(), 0);
  EXPECT_LE(conv2d_winograd_workspace_bytes(), int64_t{64} << 20);
}

void expect_input_error(Layer& layer, const Shape& sample, const std::vector<std::string>& words) {
  try {
    layer.configure(sample);
    ADD_FAILURE() << "no InputError for " << shape_string(sample);
  } catch (const InputError& error) {
    const std::string message = error.what();
    for (const std::string& word : words) {
      EXPECT_NE(message.find(word), std::string::npos) << "'" << word << "' not in: " << message;
    }
  }
}

TEST(Conv2d, RejectsMisfitInput) {
  Conv2d rgb(3, 8, 3, 1, 1);
  expect_input_error(rgb, {1, 28, 28}, {"conv2d", "(1, 28, 28)", "3"});
  expect_input_error(rgb, {3, 28}, {"conv2d", "(3, 28)"});
  Conv2d big(1, 8, 5);
  expect_input_error(big, {1, 4, 9}, {"conv2d", "(1, 4, 9)"});
  EXPECT_EQ(big.configure({1, 5, 9}), (Shape{8, 1, 5}));
  Conv2d padded(1, 8, 5, 1, 1);  // 3 + 2 pads fits a 5x5 window exactly
  EXPECT_EQ(padded.configure({1, 3, 3}), (Shape{8, 1, 1}));
  EXPECT_THROW(Conv2d(1, 8, 0), InputError);
  EXPECT_THROW(Conv2d(1, 8, 3, 0), InputError);
}

// ---------------------------------------------------------------------------------------------
// Pooling

struct PoolCase {
  int64_t batch, channels, height, width, kernel, stride;
};

std::string describe(const PoolCase& c) {
  return fmt::format("B{} C{} {}x{} k{} s{}", c.batch, c.channels, c.height, c.width, c.kernel,
                     c.stride);
}

// max (or mean) over each window; no padding.
std::vector<double> naive_pool(const Tensor& x, const PoolCase& c, bool max) {
  const int64_t out_height = (c.height - c.kernel) / c.stride + 1;
  const int64_t out_width = (c.width - c.kernel) / c.stride + 1;
  std::vector<double> y;
  for (int64_t plane = 0; plane < c.batch * c.channels; ++plane) {
    for (int64_t oh = 0; oh < out_height; ++oh) {
      for (int64_t ow = 0; ow < out_width; ++ow) {
        double best = -INFINITY, sum = 0.0;
        for (int64_t ki = 0; ki < c.kernel; ++ki) {
          for (int64_t kj = 0; kj < c.kernel; ++kj) {
            const double v = x.data()[(plane * c.height + oh * c.stride + ki) * c.width +
                                      ow * c.stride + kj];
            best = std::max(best, v);
            sum += v;
          }
        }
        y.push_back(max ? best : sum / double(c.kernel * c.kernel));
      }
    }
  }
  return y;
}

// Distinct values at least 0.05 apart in random order, so a finite-difference step of 0.01 never
// changes which element of a window is the maximum.
Tensor distinct_tensor(const Shape& shape, uint64_t seed) {
  Tensor tensor(shape);
  std::vector<int64_t> order(static_cast<size_t>(tensor.numel()));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  for (size_t i = 0; i < order.size(); ++i) {
    tensor.data()[i] = 0.05f * static_cast<float>(order[i] - tensor.numel() / 2);
  }
  return tensor;
}

const std::vector<PoolCase> kPoolCases = {
    {1, 1, 4, 4, 2, 2}, {2, 3, 6, 8, 2, 2}, {3, 2, 7, 9, 3, 2},
    {2, 2, 5, 6, 2, 1}, {1, 3, 9, 7, 3, 3}, {2, 1, 5, 5, 5, 1},
    {8, 8, 32, 33, 2, 2},  // enough planes to be shared among threads (2x2 odd width)
    {3, 2, 12, 28, 2, 2},  // LeNet's plane: 8 windows of a row at once and 6 more, tiled exactly
};

TEST(MaxPool2d, MatchesReferenceAndFiniteDifferences) {
  uint64_t seed = 300;
  for (const PoolCase& c : kPoolCases) {
    SCOPED_TRACE(describe(c));
    MaxPool2d layer(c.kernel, c.stride);
    const int64_t out_height = (c.height - c.kernel) / c.stride + 1;
    const int64_t out_width = (c.width - c.kernel) / c.stride + 1;
    EXPECT_EQ(layer.configure({c.channels, c.height, c.width}),
              (Shape{c.channels, out_height, out_width}));
    const Tensor x = distinct_tensor({c.batch, c.channels, c.height, c.width}, ++seed);
    expect_close(layer.forward(x, Mode::Train), naive_pool(x, c, true), 0.0);
    ParamArena arena = bind_params(layer, ++seed);
    check_gradients(layer, arena, distinct_tensor({c.batch, c.channels, c.height, c.width}, ++seed));
  }
}

// Ties go to the first maximum in window order, on the 2x2 stride-2 path (its 8-window vectors
// and its single windows) as on the general one.
TEST(MaxPool2d, TiesGoToTheFirstMaximumOfTheWindow) {
  constexpr int64_t kHeight = 6, kWidth = 18;
  for (const int64_t kernel : {2, 3}) {
    SCOPED_TRACE(kernel);
    MaxPool2d layer(kernel, kernel);
    layer.configure({1, kHeight, kWidth});
    Tensor x({1, 1, kHeight, kWidth});
    std::fill_n(x.data(), x.numel(), 1.0f);
    const Tensor& y = layer.forward(x, Mode::Train);
    Tensor g(y.shape());
    std::fill_n(g.data(), g.numel(), 1.0f);
    const Tensor& dx = layer.backward(g);
    for (int64_t h = 0; h < kHeight; ++h) {
      for (int64_t w = 0; w < kWidth; ++w) {
        const bool first = h % kernel == 0 && w % kernel == 0;
        EXPECT_EQ(dx.data()[h * kWidth + w], first ? 1.0f : 0.0f) << h << "," << w;
      }
    }
  }
}

TEST(MaxPool2d, OverlappingWindowsSumAtASharedMaximum) {
  // One plane, 3x3 windows with stride 1 over 4x4: the centre maximum wins all four windows.
  MaxPool2d layer(3, 1);
  layer.configure({1, 4, 4});
  Tensor x({1, 1, 4, 4});
  x.data()[5] = 10.0f;  // (1, 1)
  layer.forward(x, Mode::Train);
  Tensor g({1, 1, 2, 2});
  g.fill(1.0f);
  const Tensor& dx = layer.backward(g);
  EXPECT_EQ(dx.data()[5], 4.0f);
  EXPECT_EQ(std::accumulate(dx.data(), dx.data() + dx.numel(), 0.0f), 4.0f);
}

TEST(AvgPool2d, MatchesReferenceAndFiniteDifferences) {
  uint64_t seed = 400;
  for (const PoolCase& c : kPoolCases) {
    SCOPED_TRACE(describe(c));
    AvgPool2d layer(c.kernel, c.stride);
    layer.configure({c.channels, c.height, c.width});
    const Tensor x = random_tensor({c.batch, c.channels, c.height, c.width}, ++seed);
    expect_close(layer.forward(x, Mode::Train), naive_pool(x, c, false), 1e-6);
    ParamArena arena = bind_params(layer, ++seed);
    check_gradients(layer, arena, random_tensor({c.batch, c.channels, c.height, c.width}, ++seed));
  }
}

TEST(GlobalAvgPool, MatchesReferenceAndFiniteDifferences) {
  uint64_t seed = 500;
  for (const Shape& shape : {Shape{3, 4, 5, 7}, Shape{1, 2, 1, 1}, Shape{2, 8, 4, 4}}) {
    SCOPED_TRACE(shape_string(shape));
    GlobalAvgPool layer;
    EXPECT_EQ(layer.configure({shape[1], shape[2], shape[3]}), (Shape{shape[1]}));
    const Tensor x = random_tensor(shape, ++seed);
    const int64_t plane = shape[2] * shape[3];
    std::vector<double> expected;
    for (int64_t p = 0; p < shape[0] * shape[1]; ++p) {
      double sum = 0.0;
      for (int64_t i = 0; i < plane; ++i) sum += x.data()[p * plane + i];
      expected.push_back(sum / double(plane));
    }
    const Tensor& y = layer.forward(x, Mode::Train);
    EXPECT_EQ(y.shape(), (Shape{shape[0], shape[1]}));
    expect_close(y, expected, 1e-6);
    ParamArena arena = bind_params(layer, ++seed);
    check_gradients(layer, arena, random_tensor(shape, ++seed));
  }
}

TEST(Pooling, RejectsMisfitInput) {
  MaxPool2d max_pool(3, 2);
  expect_input_error(max_pool, {4, 2, 8}, {"maxpool2d", "(4, 2, 8)"});
  expect_input_error(max_pool, {4, 8}, {"maxpool2d", "(4, 8)"});
  AvgPool2d avg_pool(2, 2);
  expect_input_error(avg_pool, {4, 8, 1}, {"avgpool2d", "(4, 8, 1)"});
  GlobalAvgPool global;
  expect_input_error(global, {16}, {"(16)"});
  expect_input_error(global, {16, 0, 4}, {"(16, 0, 4)"});
  EXPECT_THROW(MaxPool2d(0, 1), InputError);
  EXPECT_THROW(AvgPool2d(2, 0), InputError);
}

}  // namespace
}  // namespace dtbench
