// The CUDA backend's own kernels, run on the CPU: each kernel's per-index body (core/cuda/bodies/,
// the very function the GPU runs one index per thread) looped over the same index space, against
// the CPU layer or optimizer on random shapes with odd sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/cuda/bodies/dropout.h"
#include "core/cuda/bodies/elementwise.h"
#include "core/cuda/bodies/philox.h"
#include "core/cuda/bodies/optimizer_updates.h"
#include "core/cuda/bodies/softmax_xent.h"
#include "core/kernels/activation.h"
#include "core/kernels/loss.h"
#include "core/layers/activation.h"
#include "core/layers/residual_join.h"
#include "core/optim/optimizer.h"
#include "core/util/rng.h"

namespace dtbench {
namespace {

using namespace cuda_bodies;

std::vector<float> random_vector(int64_t n, Rng& rng, float scale = 1.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = scale * rng.normal();
  return v;
}

TEST(CudaBodies, SoftmaxCrossEntropyRowsMatchTheCpuKernel) {
  Rng rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int64_t B = 1 + static_cast<int64_t>(rng.next_u64() % 33), K = 1 + static_cast<int64_t>(rng.next_u64() % 131);
    const std::vector<float> logits = random_vector(B * K, rng, 8.0f);  // large enough to need the max
    std::vector<int32_t> labels(static_cast<size_t>(B));
    for (int32_t& label : labels) label = static_cast<int32_t>(rng.next_u64() % static_cast<uint64_t>(K));
    const float scale = 1.0f / static_cast<float>(B);

    std::vector<float> cpu_grad(logits.size()), body_grad(logits.size());
    const auto cpu = kernels::softmax_crossentropy(cpu_grad.data(), logits.data(), labels.data(), scale, B, K);
    std::vector<double> row_loss(static_cast<size_t>(B));
    std::vector<int32_t> row_correct(static_cast<size_t>(B));
    for (int64_t b = 0; b < B; ++b) {
      softmax_xent_row(b, body_grad.data(), logits.data(), labels.data(), scale, K, row_loss.data(), row_correct.data());
    }
    double loss_sum = 0.0;
    int64_t correct = 0;
    for (int64_t b = 0; b < B; ++b) loss_sum += row_loss[b], correct += row_correct[b];
    EXPECT_NEAR(loss_sum, cpu.loss_sum, 1e-9 * std::max(1.0, cpu.loss_sum)) << B << "x" << K;
    EXPECT_EQ(correct, cpu.correct);
    for (size_t i = 0; i < logits.size(); ++i) ASSERT_FLOAT_EQ(body_grad[i], cpu_grad[i]) << i << " of " << B << "x" << K;
  }
}

TEST(CudaBodies, SoftmaxCrossEntropyMayOverwriteItsLogits) {
  Rng rng(8);
  const int64_t B = 5, K = 7;
  std::vector<float> logits = random_vector(B * K, rng), expected(logits.size());
  const std::vector<int32_t> labels{0, 6, 3, 3, 1};
  kernels::softmax_crossentropy(expected.data(), logits.data(), labels.data(), 0.2f, B, K);
  std::vector<double> row_loss(B);
  std::vector<int32_t> row_correct(B);
  for (int64_t b = 0; b < B; ++b) softmax_xent_row(b, logits.data(), logits.data(), labels.data(), 0.2f, K, row_loss.data(), row_correct.data());
  for (size_t i = 0; i < logits.size(); ++i) EXPECT_FLOAT_EQ(logits[i], expected[i]) << i;
}

// The CPU optimizer and the body over the same parameters and gradients, several steps.
void expect_updates_match(const OptimizerConfig& config, int64_t n) {
  Rng rng(11 + static_cast<uint64_t>(n));
  std::vector<float> cpu_params = random_vector(n, rng), body_params = cpu_params;
  auto optimizer = make_optimizer(config, n);
  std::vector<float> velocity(static_cast<size_t>(n)), m(static_cast<size_t>(n)), v(static_cast<size_t>(n));
  for (int64_t step = 1; step <= 4; ++step) {
    const std::vector<float> grads = random_vector(n, rng);
    optimizer->step(cpu_params, grads);
    if (config.name == "sgd") {
      const SgdHyper hyper{config.learning_rate, config.momentum, config.weight_decay, config.nesterov};
      float* state = config.momentum != 0.0f ? velocity.data() : nullptr;
      for (int64_t i = 0; i < n; ++i) sgd_update_at(i, body_params.data(), grads.data(), state, hyper);
    } else {
      const float correction1 = 1.0f - static_cast<float>(std::pow(config.beta1, step));
      const float correction2 = 1.0f - static_cast<float>(std::pow(config.beta2, step));
      const AdamHyper hyper{config.beta1, config.beta2, config.weight_decay, config.epsilon,
                            config.learning_rate / correction1, 1.0f / std::sqrt(correction2)};
      for (int64_t i = 0; i < n; ++i) adam_update_at(i, body_params.data(), grads.data(), m.data(), v.data(), hyper);
    }
  }
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(body_params[i], cpu_params[i]) << config.name << " element " << i;
}

TEST(CudaBodies, SgdMatchesTheCpuOptimizer) {
  expect_updates_match({.name = "sgd", .learning_rate = 0.05f}, 1);
  expect_updates_match({.name = "sgd", .learning_rate = 0.05f, .momentum = 0.9f, .weight_decay = 1e-3f}, 1001);
  expect_updates_match({.name = "sgd", .learning_rate = 0.05f, .momentum = 0.9f, .nesterov = true}, 37);
}

TEST(CudaBodies, AdamMatchesTheCpuOptimizer) {
  expect_updates_match({.name = "adam", .learning_rate = 1e-3f}, 3);
  expect_updates_match({.name = "adam", .learning_rate = 1e-2f, .weight_decay = 1e-2f}, 4099);
}

// Random123's known-answer vectors for Philox4x32-10 (its kat_vectors file).
TEST(CudaBodies, PhiloxGivesRandom123sKnownAnswers) {
  struct Vector {
    Philox4x32 counter;
    PhiloxKey key;
    Philox4x32 expected;
  };
  const Vector vectors[] = {
      {{{0, 0, 0, 0}}, {{0, 0}}, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, {{0xffffffff, 0xffffffff}},
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, {{0xa4093822, 0x299f31d0}},
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Vector& v : vectors) {
    const Philox4x32 got = philox4x32_10(v.counter, v.key);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(got.word[w], v.expected.word[w]) << "word " << w << " of " << v.counter.word[0];
  }
}

// The body the GPU runs, one group of four elements per thread, gives the CPU layer's output and
// mask element for element, pass after pass, for sizes that do not fill the last group.
TEST(CudaBodies, DropoutBodyDrawsTheCpuLayersMask) {
  Rng rng(3);
  for (const int64_t n : {1, 17, 1023}) {
    Dropout layer(0.3f);
    layer.configure({n});
    layer.reseed(1000 + static_cast<uint64_t>(n));
    for (uint64_t call = 0; call < 3; ++call) {
      Tensor input({1, n});
      for (float& x : input.span()) x = rng.normal();
      const Tensor& cpu = layer.forward(input, Mode::Train);
      Tensor ones({1, n});
      ones.fill(1.0f);
      const Tensor& cpu_mask = layer.backward(ones);  // the gradient of ones is the mask
      std::vector<float> out(static_cast<size_t>(n)), mask(static_cast<size_t>(n));
      const DropoutDraw draw{.seed = 1000 + static_cast<uint64_t>(n), .call = call, .probability = 0.3f};
      for (int64_t g = 0; g < dropout_groups(n); ++g) dropout_forward_group_at(g, out.data(), mask.data(), input.data(), n, draw);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], cpu.data()[i]) << "n " << n << " call " << call << " element " << i;
        ASSERT_EQ(mask[i], cpu_mask.data()[i]) << "n " << n << " call " << call << " element " << i;
      }
      std::vector<float> backward(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) apply_mask_at(i, backward.data(), input.data(), mask.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(backward[i], out[i]) << i;
    }
  }
}

// Keep rate and scale at several probabilities, in every lane of the four a draw gives; passes,
// seeds and groups past 2^32 elements draw afresh.
TEST(CudaBodies, DropoutMasksKeepTheRateInEveryLaneAndDifferByPassSeedAndGroup) {
  const int64_t n = 400'000;
  std::vector<float> in(static_cast<size_t>(n), 1.0f), out(in.size()), mask(in.size());
  for (const float p : {0.1f, 0.5f, 0.9f}) {
    const DropoutDraw draw{.seed = 77, .call = 5, .probability = p};
    for (int64_t g = 0; g < dropout_groups(n); ++g) dropout_forward_group_at(g, out.data(), mask.data(), in.data(), n, draw);
    int64_t dropped[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < n; ++i) {
      if (mask[i] == 0.0f) {
        ++dropped[i % 4];
      } else {
        ASSERT_FLOAT_EQ(mask[i], 1.0f / (1.0f - p)) << i;
      }
    }
    // Binomial(n / 4, p) per lane: 5 standard deviations.
    const double lane = static_cast<double>(n / 4), sigma = std::sqrt(p * (1.0 - p) / lane);
    for (int l = 0; l < 4; ++l) EXPECT_NEAR(dropped[l] / lane, p, 5 * sigma) << "p " << p << " lane " << l;
  }
  auto bits = [](uint64_t seed, uint64_t call, int64_t group) {
    const Philox4x32 b = dropout_bits({.seed = seed, .call = call, .probability = 0.5f}, group);
    return std::vector<uint32_t>(b.word, b.word + 4);
  };
  EXPECT_EQ(bits(1, 2, 3), bits(1, 2, 3));
  EXPECT_NE(bits(1, 2, 3), bits(1, 3, 3));                      // the next pass
  EXPECT_NE(bits(1, 2, 3), bits(2, 2, 3));                      // another layer's seed
  EXPECT_NE(bits(1, 2, 3), bits(1, 2, (int64_t{1} << 32) + 3));  // the group's high word counts
  EXPECT_NE(bits(1, 2, 3), bits(1ull << 32 | 1, 2, 3));          // and the seed's
  EXPECT_NE(bits(1, 2, 3), bits(1, 2ull << 32 | 2, 3));          // and the pass's
}

TEST(CudaBodies, ScaleTurnsASumIntoAMean) {
  std::vector<float> sums{3.0f, -6.0f, 1.5f};
  for (int64_t i = 0; i < 3; ++i) scale_at(i, sums.data(), 1.0f / 3.0f);
  EXPECT_FLOAT_EQ(sums[0], 1.0f);
  EXPECT_FLOAT_EQ(sums[1], -2.0f);
  EXPECT_FLOAT_EQ(sums[2], 0.5f);
}

// A residual block's join, index by index, against the host's (core/layers/residual_join.h):
// forward, the gradient through its ReLU with the shortcut's copy, and the input gradient's sum.
TEST(CudaBodies, ResidualJoinMatchesTheHostsJoin) {
  Rng rng(12);
  const int64_t n = 1237;
  Tensor main({n}), shortcut({n}), grad_host({n}), add({n});
  for (Tensor* t : {&main, &shortcut, &grad_host, &add}) {
    for (float& x : t->span()) x = rng.normal();
  }
  main.span()[5] = -shortcut.span()[5];  // a sum of exactly zero: no gradient passes
  auto host = make_host_residual_join();
  const Tensor& y_host = host->forward(main, shortcut);
  std::vector<float> y(static_cast<size_t>(n)), grad(grad_host.span().begin(), grad_host.span().end()),
      copy(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) add_relu_at(i, y.data(), main.data(), shortcut.data());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[static_cast<size_t>(i)], y_host.data()[i]) << i;
  EXPECT_EQ(y[5], 0.0f);

  const Tensor& copy_host = host->backward(grad_host);
  for (int64_t i = 0; i < n; ++i) relu_grad_copy_at(i, grad.data(), copy.data(), y.data());
  int zeroed = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(grad[static_cast<size_t>(i)], grad_host.data()[i]) << i;
    ASSERT_EQ(copy[static_cast<size_t>(i)], copy_host.data()[i]) << i;
    zeroed += grad[static_cast<size_t>(i)] == 0.0f;
  }
  EXPECT_GT(zeroed, n / 4);  // about half the sums are negative
  EXPECT_EQ(grad[5], 0.0f);

  host->accumulate(grad_host, add);
  for (int64_t i = 0; i < n; ++i) accumulate_at(i, grad.data(), add.data());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(grad[static_cast<size_t>(i)], grad_host.data()[i]) << i;
}

}  // namespace
}  // namespace dtbench
