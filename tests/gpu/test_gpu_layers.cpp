// The CUDA backend on a GPU: every twin's forward and backward against its CPU layer, and a whole
// model's training step against the CPU's. Skipped, saying why, where no GPU can be used (the
// reason is open_device's: no CUDA build, or no device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/cuda/register.h"
#include "core/device/device.h"
#include "core/layers/activation.h"
#include "core/layers/batchnorm.h"
#include "core/layers/conv2d.h"
#include "core/layers/linear.h"
#include "core/layers/loss.h"
#include "core/layers/pooling.h"
#include "core/models/models.h"
#include "core/util/error.h"
#include "core/util/rng.h"
#include "gpu/model_step_reference.h"
#include "tests/support/gradient_errors.h"

namespace dtbench {
namespace {

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    register_device_backends();
    try {
      device_ = open_device("cuda", 0);
    } catch (const InputError& error) {
      GTEST_SKIP() << "no GPU to run on: " << error.what();
    }
  }
  std::unique_ptr<DeviceBackend> device_;
};

void fill_random(std::span<float> values, uint64_t seed) {
  Rng rng(seed);
  for (float& x : values) x = rng.normal();
}

void expect_close(std::span<const float> actual, std::span<const float> expected, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double scale = 1e-6;
  for (float x : expected) scale = std::max(scale, double(std::fabs(x)));
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], 1e-4 * scale) << what << " element " << i;
  }
}

// What a twin made (device memory), copied to the host.
std::vector<float> on_host(DeviceBackend& device, const Tensor& made) {
  std::vector<float> host(static_cast<size_t>(made.numel()));
  device.download(made.span(), host);
  return host;
}

using LayerMaker = std::function<std::unique_ptr<Layer>()>;

// One layer twice, on the host and as the device's twin, with the same parameters, input and
// output gradient; outputs, input gradients and parameter gradients must agree.
void expect_twin_matches(DeviceBackend& device, const LayerMaker& make, const Shape& sample, int64_t batch,
                         const std::string& what) {
  auto host = make();
  auto hosted_twin = make();
  const Shape out_sample = host->configure(sample);
  hosted_twin->configure(sample);
  std::unique_ptr<Layer> twin = device.adopt(std::move(hosted_twin));
  std::vector<Param*> host_params, twin_params;
  host->collect_params(host_params);
  twin->collect_params(twin_params);
  ParamArena host_arena, twin_arena;
  host_arena.bind(host_params);
  twin_arena.bind(twin_params, device.allocator());
  fill_random(host_arena.values(), 3);
  std::copy(host_arena.values().begin(), host_arena.values().end(), twin_arena.values().begin());
  device.move_to_device(twin_arena.values());
  host->reseed(9);
  twin->reseed(9);

  Shape input_shape = sample, output_shape = out_sample;
  input_shape.insert(input_shape.begin(), batch);
  output_shape.insert(output_shape.begin(), batch);
  Tensor input(input_shape), grad_host(output_shape), grad_twin(output_shape);
  fill_random(input.span(), 4);
  fill_random(grad_host.span(), 5);
  std::copy(grad_host.span().begin(), grad_host.span().end(), grad_twin.span().begin());

  expect_close(on_host(device, twin->forward(input, Mode::Train)), host->forward(input, Mode::Train).span(),
               what + " forward");
  expect_close(on_host(device, twin->backward(grad_twin)), host->backward(grad_host).span(), what + " input gradient");
  device.move_to_host(twin_arena.grads());
  expect_close(twin_arena.grads(), host_arena.grads(), what + " parameter gradients");
}

TEST_F(Gpu, EveryTwinMatchesItsCpuLayer) {
  DeviceBackend& d = *device_;
  expect_twin_matches(d, [] { return std::make_unique<Linear>(37, 11); }, {37}, 5, "linear");
  expect_twin_matches(d, [] { return std::make_unique<Conv2d>(3, 8, 3, 1, 1); }, {3, 13, 11}, 3, "conv 3x3 pad 1");
  expect_twin_matches(d, [] { return std::make_unique<Conv2d>(5, 7, 3, 2, 1, false); }, {5, 9, 9}, 2, "conv stride 2");
  expect_twin_matches(d, [] { return std::make_unique<Conv2d>(4, 6, 5); }, {4, 12, 12}, 3, "conv 5x5");
  expect_twin_matches(d, [] { return std::make_unique<MaxPool2d>(2, 2); }, {3, 10, 10}, 2, "maxpool");
  expect_twin_matches(d, [] { return std::make_unique<MaxPool2d>(3, 2); }, {2, 11, 11}, 2, "maxpool 3/2");
  expect_twin_matches(d, [] { return std::make_unique<AvgPool2d>(2, 2); }, {3, 8, 8}, 2, "avgpool");
  expect_twin_matches(d, [] { return std::make_unique<GlobalAvgPool>(); }, {5, 7, 7}, 3, "global avgpool");
  expect_twin_matches(d, [] { return std::make_unique<BatchNorm2d>(6); }, {6, 5, 7}, 4, "batchnorm");
  expect_twin_matches(d, [] { return std::make_unique<ReLU>(); }, {3, 5, 5}, 2, "relu");
  expect_twin_matches(d, [] { return std::make_unique<Tanh>(); }, {17}, 3, "tanh");
  expect_twin_matches(d, [] { return std::make_unique<Sigmoid>(); }, {17}, 3, "sigmoid");
  expect_twin_matches(d, [] { return std::make_unique<Dropout>(0.4f); }, {33}, 4, "dropout");
}

// The arena's memory: host floats whose device copy starts zero; a range moved to the device and
// back comes back, and nothing beside it moved.
TEST_F(Gpu, MirroredMemoryMovesExactlyTheRangeAsked) {
  const int64_t n = 1000;
  auto memory = device_->allocator()(n);
  const std::span<float> values(memory.get(), static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) + 1.0f;
  device_->move_to_device(values.subspan(100, 100));
  std::fill(values.begin(), values.end(), -1.0f);
  device_->move_to_host(values);
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(values[i], i >= 100 && i < 200 ? static_cast<float>(i) + 1.0f : 0.0f) << i;
  }
  EXPECT_NE(device_->device_view(values).data(), values.data());
}

// The device's SGD and Adam against the CPU's, over arrays of the backend's allocator (host memory
// mirrored on the device) as the arena is.
TEST_F(Gpu, DeviceOptimizersMatchTheCpuOnes) {
  for (const OptimizerConfig& config : {OptimizerConfig{.name = "sgd", .learning_rate = 0.1f, .momentum = 0.9f,
                                                        .weight_decay = 1e-3f, .nesterov = true},
                                        OptimizerConfig{.name = "adam", .learning_rate = 1e-2f}}) {
    const int64_t n = 1000003;
    auto params = device_->allocator()(n), grads = device_->allocator()(n);
    std::vector<float> host_params(static_cast<size_t>(n)), host_grads(static_cast<size_t>(n));
    fill_random(host_params, 1);
    const std::span<float> device_params(params.get(), static_cast<size_t>(n)), device_grads(grads.get(), static_cast<size_t>(n));
    std::copy(host_params.begin(), host_params.end(), params.get());
    device_->move_to_device(device_params);
    auto on_device = device_->make_optimizer(config, n);
    ASSERT_NE(on_device, nullptr);
    auto on_host = make_optimizer(config, n);
    for (int step = 0; step < 3; ++step) {
      fill_random(host_grads, 10 + step);
      std::copy(host_grads.begin(), host_grads.end(), grads.get());
      device_->move_to_device(device_grads);
      on_host->step(host_params, host_grads);
      on_device->step(device_params, device_grads);
    }
    device_->move_to_host(device_params);
    expect_close(device_params, host_params, config.name);
    expect_close(on_device->state(), on_host->state(), config.name + " state");
    EXPECT_EQ(on_device->steps_taken(), 3);
  }
}

// What the backend's tuning chose (cuDNN's algorithm per convolution shape and direction).
std::string choices_text(const DeviceBackend& device) {
  std::string text;
  for (const std::string& line : device.tuning_choices()) text += "  " + line + "\n";
  return text.empty() ? "  (none)\n" : text;
}

// A training step of each model on the device against the same step on the host; on a mismatch,
// where it arises (each parameter's error, from the input to the output) and the algorithms used.
TEST_F(Gpu, AModelStepMatchesTheCpuStep) {
  for (const auto& entry : models::catalogue()) {
    auto host = models::build(entry.name, entry.default_input, 10);
    auto on_device = models::build(entry.name, entry.default_input, 10, device_.get());
    host->initialize(1);
    on_device->initialize(1);
    // The batch and the bound float64 gives the step (model_step_reference.h).
    const testing::ModelStepReference reference = testing::model_step_reference(entry.name);
    Shape batch_shape = entry.default_input;
    batch_shape.insert(batch_shape.begin(), reference.batch);
    Tensor batch(batch_shape);
    fill_random(batch.span(), 6);
    std::vector<int32_t> labels(static_cast<size_t>(reference.batch));
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = std::vector<int32_t>{0, 3, 9, 3}[i % 4];
    Tensor grad_host, grad_device;
    const LossResult host_loss = host->loss(host->forward(batch, Mode::Train), labels, &grad_host);
    const LossResult device_loss = on_device->loss(on_device->forward(batch, Mode::Train), labels, &grad_device);
    EXPECT_NEAR(device_loss.loss, host_loss.loss, 1e-3 * std::max(1.0, host_loss.loss)) << entry.name;
    host->backward(grad_host);
    on_device->backward(grad_device);
    device_->move_to_host(on_device->arena().grads());
    double max_error = 0.0, max_grad = 1e-6;
    const auto hg = host->arena().grads(), dg = on_device->arena().grads();
    for (size_t i = 0; i < hg.size(); ++i) {
      max_error = std::max(max_error, double(std::fabs(dg[i] - hg[i])));
      max_grad = std::max(max_grad, double(std::fabs(hg[i])));
    }
    EXPECT_LT(max_error, testing::model_step_bound(reference) * max_grad)
        << entry.name << " at batch " << reference.batch << ": each parameter's gradient error, device against host\n"
        << testing::gradient_errors_table(testing::param_gradient_errors(host->arena().params(), hg, dg))
        << "cuDNN's choices:\n" << choices_text(*device_);
  }
}

}  // namespace
}  // namespace dtbench
