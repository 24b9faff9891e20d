// Batch norm: gradients against central finite differences, values and running statistics against
// independent double-precision computations (and PyTorch's update rule).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/layers/batchnorm.h"
#include "core/util/error.h"
#include "support/gradcheck.h"

namespace dtbench {
namespace {

using testing::bind_params;
using testing::expect_gradients_match;
using testing::GradcheckOptions;
using testing::random_tensor;

Shape sample_of(const Shape& batch_shape) {
  return Shape(batch_shape.begin() + 1, batch_shape.end());
}

// ---- Batch norm -----------------------------------------------------------------------------

// Per-channel batch mean and biased variance of x (B, C, H, W), two-pass in double.
struct ChannelStats {
  std::vector<double> mean, var;
};
ChannelStats reference_stats(const Tensor& x) {
  const int64_t B = x.dim(0), C = x.dim(1), P = x.dim(2) * x.dim(3);
  ChannelStats stats{std::vector<double>(C, 0.0), std::vector<double>(C, 0.0)};
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < P; ++i) stats.mean[c] += x.data()[(b * C + c) * P + i];
    stats.mean[c] /= double(B * P);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < P; ++i) {
        const double d = x.data()[(b * C + c) * P + i] - stats.mean[c];
        stats.var[c] += d * d;
      }
    }
    stats.var[c] /= double(B * P);
  }
  return stats;
}

// gamma · (x − mean) / sqrt(var + eps) + beta, in double, compared with `y`.
void expect_normalized(const Tensor& y, const Tensor& x, const std::vector<double>& mean,
                       const std::vector<double>& var, const float* gamma, const float* beta,
                       double eps, double tolerance) {
  const int64_t B = x.dim(0), C = x.dim(1), P = x.dim(2) * x.dim(3);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t i = 0; i < P; ++i) {
        const int64_t at = (b * C + c) * P + i;
        const double expected =
            gamma[c] * (x.data()[at] - mean[c]) / std::sqrt(var[c] + eps) + beta[c];
        ASSERT_NEAR(y.data()[at], expected, tolerance) << "at " << at;
      }
    }
  }
}

class BatchNormGradients : public ::testing::TestWithParam<Shape> {};

TEST_P(BatchNormGradients, TrainMatchFiniteDifferences) {
  const Shape shape = GetParam();
  BatchNorm2d bn(shape[1]);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 11);
  expect_gradients_match(bn, random_tensor(shape, 12, 2.0f));
}

TEST_P(BatchNormGradients, EvalMatchFiniteDifferences) {
  const Shape shape = GetParam();
  BatchNorm2d bn(shape[1]);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 13);
  bn.forward(random_tensor(shape, 14, 3.0f), Mode::Train);  // non-trivial running statistics
  GradcheckOptions options;
  options.mode = Mode::Eval;
  expect_gradients_match(bn, random_tensor(shape, 15), options);
}

TEST_P(BatchNormGradients, ParamGradientsWithoutInputGradient) {
  const Shape shape = GetParam();
  BatchNorm2d bn(shape[1]);
  bn.set_needs_input_grad(false);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 16);
  expect_gradients_match(bn, random_tensor(shape, 17));
}

INSTANTIATE_TEST_SUITE_P(Shapes, BatchNormGradients,
                         ::testing::Values(Shape{3, 5, 4, 3}, Shape{2, 7, 1, 1}, Shape{1, 3, 5, 7},
                                           Shape{4, 2, 9, 9}));

TEST(BatchNorm, TrainNormalizesWithBatchStatistics) {
  const Shape shape{5, 3, 6, 7};  // planes of 42: lanes and a remainder
  BatchNorm2d bn(3);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 21);
  const Tensor x = random_tensor(shape, 22, 3.0f);
  const Tensor& y = bn.forward(x, Mode::Train);
  const ChannelStats stats = reference_stats(x);
  std::vector<Param*> params;
  bn.collect_params(params);
  expect_normalized(y, x, stats.mean, stats.var, params[0]->value, params[1]->value, 1e-5, 1e-4);
}

// Wide enough for several channel blocks and planes long enough for the vector lanes to be
// folded into double several times, with a ragged tail (P = 1599): forward and backward against
// the textbook formulas in double.
TEST(BatchNorm, LargeShapeMatchesDoubleReference) {
  const Shape shape{3, 300, 39, 41};
  const int64_t B = shape[0], C = shape[1], P = shape[2] * shape[3];
  BatchNorm2d bn(C);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 25);
  Tensor x = random_tensor(shape, 26, 2.0f);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] += float((i / P) % C) * 0.01f;
  const Tensor& y = bn.forward(x, Mode::Train);
  const ChannelStats stats = reference_stats(x);
  std::vector<Param*> params;
  bn.collect_params(params);
  const float* gamma = params[0]->value;
  expect_normalized(y, x, stats.mean, stats.var, gamma, params[1]->value, 1e-5, 1e-4);

  const Tensor dy = random_tensor(shape, 27);
  Tensor grad(shape);
  std::copy_n(dy.data(), dy.numel(), grad.data());
  const Tensor& dx = bn.backward(grad);
  const double N = double(B * P);
  for (int64_t c = 0; c < C; ++c) {
    const double inv_std = 1.0 / std::sqrt(stats.var[c] + 1e-5);
    double sum_dy = 0.0, sum_dy_xhat = 0.0;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < P; ++i) {
        const int64_t at = (b * C + c) * P + i;
        sum_dy += dy.data()[at];
        sum_dy_xhat += dy.data()[at] * (x.data()[at] - stats.mean[c]) * inv_std;
      }
    }
    ASSERT_NEAR(params[1]->grad[c], sum_dy, 1e-5 * N) << c;
    ASSERT_NEAR(params[0]->grad[c], sum_dy_xhat, 1e-5 * N) << c;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < P; i += 37) {
        const int64_t at = (b * C + c) * P + i;
        const double xhat = (x.data()[at] - stats.mean[c]) * inv_std;
        const double expected =
            gamma[c] * inv_std / N * (N * dy.data()[at] - sum_dy - xhat * sum_dy_xhat);
        ASSERT_NEAR(dx.data()[at], expected, 1e-4 * std::max(1.0, std::abs(expected)))
            << c << " " << at;
      }
    }
  }
}

TEST(BatchNorm, LargeMeanDoesNotCancel) {
  const Shape shape{8, 2, 16, 16};
  Tensor x = random_tensor(shape, 23);
  for (float& v : x.span()) v += 1000.0f;  // |mean| ≫ std: Σx² / N − mean² would lose it all
  BatchNorm2d bn(2);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 24);
  const Tensor& y = bn.forward(x, Mode::Train);
  const ChannelStats stats = reference_stats(x);
  std::vector<Param*> params;
  bn.collect_params(params);
  expect_normalized(y, x, stats.mean, stats.var, params[0]->value, params[1]->value, 1e-5, 2e-3);
}

TEST(BatchNorm, RunningStatisticsFollowPyTorch) {
  const Shape shape{4, 3, 5, 2};
  const float momentum = 0.25f;
  BatchNorm2d bn(3, momentum);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 31);
  std::vector<Tensor*> buffers;
  bn.collect_buffers(buffers);
  ASSERT_EQ(buffers.size(), 2u);
  EXPECT_EQ(buffers[0], &bn.running_mean());
  EXPECT_EQ(buffers[1], &bn.running_var());
  for (int64_t c = 0; c < 3; ++c) {
    EXPECT_EQ(bn.running_mean().data()[c], 0.0f);
    EXPECT_EQ(bn.running_var().data()[c], 1.0f);
  }

  Tensor x = random_tensor(shape, 32, 2.0f);
  // Channel c of every sample gets + 0.5·c, so the means differ (plane of 10, 3 channels).
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] += 0.5f * float((i / 10) % 3);
  bn.forward(x, Mode::Train);
  const ChannelStats stats = reference_stats(x);
  const double count = 4 * 5 * 2;
  for (int64_t c = 0; c < 3; ++c) {
    const double unbiased = stats.var[c] * count / (count - 1);
    EXPECT_NEAR(bn.running_mean().data()[c], momentum * stats.mean[c], 1e-6) << c;
    EXPECT_NEAR(bn.running_var().data()[c], (1 - momentum) * 1.0 + momentum * unbiased, 1e-5) << c;
  }
}

TEST(BatchNorm, EvalUsesRunningStatistics) {
  const Shape shape{3, 4, 3, 3};
  BatchNorm2d bn(4, 0.5f);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 41);
  for (uint64_t step = 0; step < 3; ++step)
    bn.forward(random_tensor(shape, 42 + step, 3.0f), Mode::Train);
  std::vector<double> mean(4), var(4);
  for (int64_t c = 0; c < 4; ++c) {
    mean[c] = bn.running_mean().data()[c];
    var[c] = bn.running_var().data()[c];
  }
  const Tensor x = random_tensor(shape, 49);
  const Tensor& y = bn.forward(x, Mode::Eval);
  std::vector<Param*> params;
  bn.collect_params(params);
  expect_normalized(y, x, mean, var, params[0]->value, params[1]->value, 1e-5, 1e-5);
  for (int64_t c = 0; c < 4; ++c) {  // evaluation leaves the running statistics alone
    EXPECT_EQ(bn.running_mean().data()[c], float(mean[c]));
    EXPECT_EQ(bn.running_var().data()[c], float(var[c]));
  }
}

TEST(BatchNorm, BackwardWritesOverGradOutputAndOverwritesParamGrads) {
  const Shape shape{2, 3, 4, 4};
  BatchNorm2d bn(3);
  bn.configure(sample_of(shape));
  ParamArena arena = bind_params(bn, 51);
  const Tensor x = random_tensor(shape, 52);
  bn.forward(x, Mode::Train);
  Tensor grad = random_tensor(shape, 53);
  Tensor& dx = bn.backward(grad);
  EXPECT_EQ(dx.data(), grad.data());
  const std::vector<float> first(arena.grads().begin(), arena.grads().end());
  Tensor grad_again = random_tensor(shape, 53);
  bn.backward(grad_again);  // writes, not accumulates
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(arena.grads()[i], first[i]) << i;
  // The input gradient of batch-statistics normalisation sums to zero over each channel.
  for (int64_t c = 0; c < 3; ++c) {
    double sum = 0.0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 16; ++i) sum += dx.data()[(b * 3 + c) * 16 + i];
    EXPECT_NEAR(sum, 0.0, 1e-4) << c;
  }
}

TEST(BatchNorm, RejectsWrongShapes) {
  BatchNorm2d bn(16);
  try {
    bn.configure({8, 4, 4});
    FAIL() << "no InputError";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("(8, 4, 4)"), std::string::npos) << message;
    EXPECT_NE(message.find("(16, H, W)"), std::string::npos) << message;
  }
  EXPECT_THROW(bn.configure({16, 4}), InputError);
  EXPECT_THROW(bn.configure({16, 4, 4, 1}), InputError);

  BatchNorm2d single(2);
  single.configure({2, 1, 1});
  ParamArena arena = bind_params(single, 61);
  EXPECT_THROW(single.forward(Tensor({1, 2, 1, 1}), Mode::Train), InputError);  // zero variance
  EXPECT_NO_THROW(single.forward(Tensor({1, 2, 1, 1}), Mode::Eval));
}

}  // namespace
}  // namespace dtbench
