// Optimizers against an independent double-precision transcription of torch.optim's update rules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "core/optim/optimizer.h"
#include "core/util/error.h"
#include "core/util/rng.h"

namespace dtbench {
namespace {

std::vector<float> random_vector(size_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.normal();
  return v;
}

TEST(Sgd, MomentumWeightDecayAndNesterovMatchReference) {
  for (bool nesterov : {false, true}) {
    const OptimizerConfig config{.name = "sgd", .learning_rate = 0.1f, .momentum = 0.9f,
                                 .weight_decay = 0.01f, .nesterov = nesterov};
    std::vector<float> params = random_vector(37, 1);
    std::vector<double> expected(params.begin(), params.end()), velocity(params.size(), 0.0);
    auto sgd = make_optimizer(config, static_cast<int64_t>(params.size()));
    for (int step = 0; step < 5; ++step) {
      const std::vector<float> grads = random_vector(params.size(), 100 + step);
      for (size_t i = 0; i < params.size(); ++i) {
        const double g = grads[i] + 0.01 * expected[i];
        velocity[i] = 0.9 * velocity[i] + g;
        expected[i] -= 0.1 * (nesterov ? g + 0.9 * velocity[i] : velocity[i]);
      }
      sgd->step(params, grads);
    }
    for (size_t i = 0; i < params.size(); ++i) EXPECT_NEAR(params[i], expected[i], 1e-5) << i;
  }
}

TEST(Sgd, PlainStepIsGradientDescent) {
  std::vector<float> params{1.0f, -2.0f};
  const std::vector<float> grads{0.5f, 0.25f};
  auto sgd = make_optimizer({.name = "sgd", .learning_rate = 0.2f}, 2);
  sgd->step(params, grads);
  EXPECT_FLOAT_EQ(params[0], 0.9f);
  EXPECT_FLOAT_EQ(params[1], -2.05f);
}

TEST(Adam, MatchesReferenceWithBiasCorrection) {
  const OptimizerConfig config{.name = "adam", .learning_rate = 0.01f, .weight_decay = 0.001f};
  std::vector<float> params = random_vector(29, 2);
  std::vector<double> expected(params.begin(), params.end()), m(params.size()), v(params.size());
  auto adam = make_optimizer(config, static_cast<int64_t>(params.size()));
  for (int t = 1; t <= 6; ++t) {
    const std::vector<float> grads = random_vector(params.size(), 200 + t);
    for (size_t i = 0; i < params.size(); ++i) {
      const double g = grads[i] + 0.001 * expected[i];
      m[i] = 0.9 * m[i] + 0.1 * g;
      v[i] = 0.999 * v[i] + 0.001 * g * g;
      const double m_hat = m[i] / (1 - std::pow(0.9, t));
      const double v_hat = v[i] / (1 - std::pow(0.999, t));
      expected[i] -= 0.01 * m_hat / (std::sqrt(v_hat) + 1e-8);
    }
    adam->step(params, grads);
  }
  for (size_t i = 0; i < params.size(); ++i) EXPECT_NEAR(params[i], expected[i], 1e-5) << i;
  EXPECT_EQ(adam->steps_taken(), 6);
}

// A parameter server steps a large shard in parts, out of order and on several threads: every
// float must come out as the whole step makes it, bit for bit, step after step (state carried).
TEST(Optimizer, StepInPartsIsTheWholeStepBitForBit) {
  const std::vector<OptimizerConfig> configs = {
      {.name = "sgd", .learning_rate = 0.1f},
      {.name = "sgd", .learning_rate = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f, .nesterov = true},
      {.name = "adam", .learning_rate = 0.01f, .weight_decay = 0.001f}};
  const size_t count = 1031;  // parts of odd lengths, not multiples of any vector width
  const std::vector<std::pair<size_t, size_t>> parts = {{600, 1031}, {0, 17}, {17, 600}};
  for (const OptimizerConfig& config : configs) {
    auto whole = make_optimizer(config, static_cast<int64_t>(count));
    auto parted = make_optimizer(config, static_cast<int64_t>(count));
    std::vector<float> whole_params = random_vector(count, 3), parted_params = whole_params;
    for (int step = 0; step < 4; ++step) {
      const std::vector<float> grads = random_vector(count, 300 + step);
      whole->step(whole_params, grads);
      parted->begin_step();
      for (const auto& [begin, end] : parts) {
        parted->step_part(static_cast<int64_t>(begin), std::span(parted_params).subspan(begin, end - begin),
                          std::span(grads).subspan(begin, end - begin));
      }
    }
    EXPECT_EQ(std::memcmp(whole_params.data(), parted_params.data(), count * sizeof(float)), 0) << config.name;
    const auto whole_state = whole->state(), parted_state = parted->state();
    ASSERT_EQ(whole_state.size(), parted_state.size());
    EXPECT_EQ(std::memcmp(whole_state.data(), parted_state.data(), whole_state.size() * sizeof(float)), 0);
    EXPECT_EQ(parted->steps_taken(), 4);
    EXPECT_NE(whole_params, random_vector(count, 3)) << "the steps moved nothing";
  }
}

TEST(MakeOptimizer, RejectsUnknownNamesAndBadHyperParameters) {
  EXPECT_THROW(make_optimizer({.name = "rmsprop"}, 4), InputError);
  EXPECT_THROW(make_optimizer({.name = "sgd", .learning_rate = 0.0f}, 4), InputError);
  EXPECT_THROW(make_optimizer({.name = "sgd", .momentum = 1.0f}, 4), InputError);
  try {
    make_optimizer({.name = "rmsprop"}, 4);
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("sgd or adam"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace dtbench
