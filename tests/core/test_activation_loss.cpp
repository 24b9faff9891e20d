// Activations, dropout, flatten and the softmax cross-entropy: gradients against central finite
// differences, values against independent double-precision computations.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/layers/activation.h"
#include "core/layers/loss.h"
#include "core/util/error.h"
#include "support/gradcheck.h"

namespace dtbench {
namespace {

using testing::expect_gradients_match;
using testing::random_tensor;

// ---- Activations ----------------------------------------------------------------------------

// Normal values pushed at least `margin` away from zero, so a finite step never crosses the kink.
Tensor away_from_zero(const Shape& shape, uint64_t seed, float margin) {
  Tensor x = random_tensor(shape, seed);
  for (float& v : x.span()) v = v < 0.0f ? v - margin : v + margin;
  return x;
}

TEST(ReLU, MatchesFiniteDifferences) {
  ReLU relu;
  relu.configure({3, 5, 2});
  expect_gradients_match(relu, away_from_zero({4, 3, 5, 2}, 71, 0.1f));
}

TEST(ReLU, InPlaceAgreesWithOutOfPlace) {
  const Shape shape{3, 4, 5};
  const Tensor x = random_tensor(shape, 72);
  Tensor x_copy(shape);
  std::copy_n(x.data(), x.numel(), x_copy.data());
  ReLU reference;
  ReLU in_place(true);
  const Tensor& y_ref = reference.forward(x, Mode::Train);
  const Tensor& y = in_place.forward(x_copy, Mode::Train);
  EXPECT_EQ(y.data(), x_copy.data());  // a view of the input, no copy
  EXPECT_EQ(y.shape(), shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(y.data()[i], std::max(x.data()[i], 0.0f));
    EXPECT_EQ(y.data()[i], y_ref.data()[i]);
  }
  Tensor g_ref = random_tensor(shape, 73);
  Tensor g = random_tensor(shape, 73);
  const Tensor& dx_ref = reference.backward(g_ref);
  Tensor& dx = in_place.backward(g);
  EXPECT_EQ(dx.data(), g.data());  // written over grad_output
  for (int64_t i = 0; i < x.numel(); ++i) {
    EXPECT_EQ(dx.data()[i], x.data()[i] > 0.0f ? g_ref.data()[i] : 0.0f) << i;
    EXPECT_EQ(dx.data()[i], dx_ref.data()[i]) << i;
  }
}

TEST(Tanh, MatchesFiniteDifferences) {
  Tanh tanh_layer;
  tanh_layer.configure({17});
  expect_gradients_match(tanh_layer, random_tensor({5, 17}, 81, 1.5f));
  const Tensor x = random_tensor({2, 3}, 82);
  const Tensor& y = tanh_layer.forward(x, Mode::Train);
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_NEAR(y.data()[i], std::tanh(double(x.data()[i])), 1e-6);
}

TEST(Sigmoid, MatchesFiniteDifferences) {
  Sigmoid sigmoid;
  sigmoid.configure({17});
  expect_gradients_match(sigmoid, random_tensor({5, 17}, 83, 2.0f));
  Tensor x = random_tensor({2, 3}, 84, 3.0f);
  x.data()[0] = -200.0f;  // exp(200) overflows float: the output must still be 0, not NaN
  x.data()[1] = 200.0f;
  const Tensor& y = sigmoid.forward(x, Mode::Train);
  for (int64_t i = 0; i < x.numel(); ++i)
    EXPECT_NEAR(y.data()[i], 1.0 / (1.0 + std::exp(-double(x.data()[i]))), 1e-6) << i;
}

TEST(Flatten, IsAViewBothWays) {
  Flatten flatten;
  EXPECT_EQ(flatten.configure({3, 4, 5}), (Shape{60}));
  expect_gradients_match(flatten, random_tensor({2, 3, 4, 5}, 91));
  const Tensor x = random_tensor({2, 3, 4, 5}, 92);
  const Tensor& y = flatten.forward(x, Mode::Train);
  EXPECT_EQ(y.shape(), (Shape{2, 60}));
  EXPECT_EQ(y.data(), x.data());
  Tensor g = random_tensor({2, 60}, 93);
  Tensor& dx = flatten.backward(g);
  EXPECT_EQ(dx.shape(), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(dx.data(), g.data());
}

// ---- Dropout --------------------------------------------------------------------------------

TEST(Dropout, MaskStatisticsAndScale) {
  const float p = 0.3f;
  const int64_t n = 200000;
  Dropout dropout(p);
  dropout.configure({n});
  dropout.reseed(5);
  Tensor x({1, n});
  x.fill(2.0f);
  const Tensor& y = dropout.forward(x, Mode::Train);
  int64_t dropped = 0;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    if (y.data()[i] == 0.0f) {
      ++dropped;
    } else {
      ASSERT_FLOAT_EQ(y.data()[i], 2.0f / (1.0f - p)) << i;
    }
    sum += y.data()[i];
  }
  // Binomial(n, p): standard deviation of the fraction is sqrt(p(1−p)/n) ≈ 0.001.
  EXPECT_NEAR(double(dropped) / n, p, 0.006);
  EXPECT_NEAR(sum / n, 2.0, 0.02);  // inverted dropout keeps the expectation
}

TEST(Dropout, BackwardAppliesTheForwardMask) {
  Dropout dropout(0.5f);
  dropout.configure({1000});
  dropout.reseed(6);
  const Tensor x = away_from_zero({2, 1000}, 101, 0.1f);
  const Tensor& y = dropout.forward(x, Mode::Train);
  Tensor g = random_tensor({2, 1000}, 102);
  const Tensor g_copy = random_tensor({2, 1000}, 102);
  const Tensor& dx = dropout.backward(g);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float mask = y.data()[i] / x.data()[i];  // 0 or 2
    EXPECT_NEAR(dx.data()[i], g_copy.data()[i] * mask, 1e-5) << i;
  }
}

// Central finite differences of Σ dropout(x) ⊙ R, the layer reseeded before every pass so that
// each draws the same mask (reseeding restarts the pass counter), against backward.
TEST(Dropout, GradientMatchesFiniteDifferences) {
  Dropout dropout(0.4f);
  dropout.configure({37});
  Tensor x = away_from_zero({3, 37}, 131, 0.1f);
  const Tensor r = random_tensor({3, 37}, 132);
  auto objective = [&] {
    dropout.reseed(9);
    return testing::weighted_sum(dropout.forward(x, Mode::Train), r);
  };
  objective();
  Tensor g({3, 37});
  std::copy_n(r.data(), r.numel(), g.data());
  const Tensor& dx = dropout.backward(g);
  const std::vector<float> analytic(dx.data(), dx.data() + dx.numel());
  const float h = 1e-2f;
  int64_t kept = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float saved = x.data()[i];
    x.data()[i] = saved + h;
    const double up = objective();
    x.data()[i] = saved - h;
    const double down = objective();
    x.data()[i] = saved;
    const double numeric = (up - down) / (2.0 * h);
    EXPECT_NEAR(analytic[static_cast<size_t>(i)], numeric, 1e-3 * (1.0 + std::fabs(numeric))) << i;
    if (analytic[static_cast<size_t>(i)] != 0.0f) ++kept;
  }
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, x.numel());
}

TEST(Dropout, SeedMakesMasksReproducible) {
  const Tensor x = away_from_zero({4, 256}, 111, 0.1f);
  auto output_of = [&](Dropout& layer) {
    const Tensor& y = layer.forward(x, Mode::Train);
    return std::vector<float>(y.data(), y.data() + y.numel());
  };
  Dropout a(0.4f), b(0.4f), c(0.4f);
  a.reseed(42);
  b.reseed(42);
  c.reseed(43);
  const std::vector<float> a1 = output_of(a), b1 = output_of(b), c1 = output_of(c);
  EXPECT_EQ(a1, b1);
  EXPECT_NE(a1, c1);
  const std::vector<float> a2 = output_of(a);
  EXPECT_NE(a1, a2);  // each pass draws a fresh mask
  EXPECT_EQ(output_of(b), a2);
  a.reseed(42);  // reseeding restarts the sequence
  EXPECT_EQ(output_of(a), a1);
}

TEST(Dropout, EvalIsIdentity) {
  Dropout dropout(0.5f);
  dropout.reseed(7);
  const Tensor x = random_tensor({3, 50}, 121);
  const Tensor& y = dropout.forward(x, Mode::Eval);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.data()[i], x.data()[i]);
  Tensor g = random_tensor({3, 50}, 122);
  const Tensor g_copy = random_tensor({3, 50}, 122);
  const Tensor& dx = dropout.backward(g);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(dx.data()[i], g_copy.data()[i]);
  EXPECT_THROW(Dropout(1.5f), InputError);
  EXPECT_THROW(Dropout(-0.1f), InputError);
}

// ---- Softmax cross-entropy ------------------------------------------------------------------

struct ReferenceLoss {
  double loss = 0.0;
  std::vector<double> grad;
};
ReferenceLoss reference_loss(const Tensor& logits, const std::vector<int32_t>& labels) {
  const int64_t B = logits.dim(0), K = logits.dim(1);
  ReferenceLoss result{0.0, std::vector<double>(B * K)};
  for (int64_t b = 0; b < B; ++b) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < K; ++k) max = std::max(max, double(logits.data()[b * K + k]));
    double z = 0.0;
    for (int64_t k = 0; k < K; ++k) z += std::exp(logits.data()[b * K + k] - max);
    result.loss += (std::log(z) + max - logits.data()[b * K + labels[b]]) / double(B);
    for (int64_t k = 0; k < K; ++k) {
      const double p = std::exp(logits.data()[b * K + k] - max) / z;
      result.grad[b * K + k] = (p - (k == labels[b] ? 1.0 : 0.0)) / double(B);
    }
  }
  return result;
}

TEST(SoftmaxCrossEntropy, MatchesDoubleReference) {
  Tensor logits = random_tensor({7, 5}, 131, 3.0f);
  const std::vector<int32_t> labels{0, 4, 2, 2, 1, 3, 0};
  Tensor grad;
  const LossResult result = softmax_cross_entropy(logits, labels, &grad);
  const ReferenceLoss reference = reference_loss(logits, labels);
  EXPECT_NEAR(result.loss, reference.loss, 1e-6);
  ASSERT_EQ(grad.shape(), logits.shape());
  for (int64_t i = 0; i < grad.numel(); ++i)
    EXPECT_NEAR(grad.data()[i], reference.grad[i], 1e-6) << i;

  int64_t correct = 0;
  for (int64_t b = 0; b < 7; ++b) {
    const float* row = logits.data() + b * 5;
    correct += std::max_element(row, row + 5) - row == labels[b] ? 1 : 0;
  }
  EXPECT_EQ(result.correct, correct);
  EXPECT_EQ(softmax_cross_entropy(logits, labels, nullptr).loss, result.loss);

  // The gradient against central finite differences of the loss itself.
  const float step = 1e-2f;
  for (int64_t i = 0; i < logits.numel(); ++i) {
    const float saved = logits.data()[i];
    logits.data()[i] = saved + step;
    const double up = softmax_cross_entropy(logits, labels, nullptr).loss;
    logits.data()[i] = saved - step;
    const double down = softmax_cross_entropy(logits, labels, nullptr).loss;
    logits.data()[i] = saved;
    EXPECT_NEAR((up - down) / (2.0 * step), grad.data()[i], 1e-4) << i;
  }
}

TEST(SoftmaxCrossEntropy, HugeLogitsDoNotOverflow) {
  Tensor logits({3, 3});
  const float rows[3][3] = {{1e4f, 0.0f, -1e4f}, {1e4f, 1e4f, -1e4f}, {-1e4f, 5e3f, 1e4f}};
  std::copy_n(&rows[0][0], 9, logits.data());
  const std::vector<int32_t> labels{0, 1, 1};
  Tensor grad;
  const LossResult result = softmax_cross_entropy(logits, labels, &grad);
  // Row 0: ≈ 0; row 1: log 2; row 2: 5000. Mean over 3.
  EXPECT_TRUE(std::isfinite(result.loss));
  EXPECT_NEAR(result.loss, (0.0 + std::log(2.0) + 5e3) / 3.0, 1e-3);
  EXPECT_EQ(result.correct, 1);  // row 1 ties and the first maximum (class 0) counts, not label 1
  for (float g : grad.span()) EXPECT_TRUE(std::isfinite(g));
  EXPECT_NEAR(grad.data()[0], 0.0, 1e-7);
  EXPECT_NEAR(grad.data()[3], 0.5 / 3.0, 1e-7);
  EXPECT_NEAR(grad.data()[4], -0.5 / 3.0, 1e-7);
  EXPECT_NEAR(grad.data()[7], -1.0 / 3.0, 1e-7);
  EXPECT_NEAR(grad.data()[8], 1.0 / 3.0, 1e-7);
}

TEST(SoftmaxCrossEntropy, RejectsBadLabels) {
  const Tensor logits = random_tensor({2, 3}, 141);
  for (int32_t bad : {3, 17, -1}) {
    const std::vector<int32_t> labels{0, bad};
    try {
      softmax_cross_entropy(logits, labels, nullptr);
      FAIL() << "no InputError for label " << bad;
    } catch (const InputError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("label " + std::to_string(bad)), std::string::npos) << message;
      EXPECT_NE(message.find("K = 3"), std::string::npos) << message;
    }
  }
  EXPECT_THROW(softmax_cross_entropy(logits, std::vector<int32_t>{0}, nullptr), InputError);
}

}  // namespace
}  // namespace dtbench
