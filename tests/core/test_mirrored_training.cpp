// The mirrored arena's copies, end to end on the CPU: a stand-in backend whose "device" copy of the
// arena is a second host block (core/cuda/plan/host_mirror.h with memcpy as the copy), whose twins
// run the host layers over that copy (their parameters pointed at it for the call) and whose
// optimizer updates it, as the CUDA backend's do. Trained through the Trainer, a run whose copies
// were missing anywhere — initial weights never sent, gradients read stale on the host, averaged
// ones never sent back, final weights never fetched — ends with other weights than the same run on
// the host; every one of these runs must end bit for bit with the host's.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "comm/local_transport.h"
#include "comm/transport.h"
#include "core/cuda/plan/host_mirror.h"
#include "core/device/device.h"
#include "core/models/models.h"
#include "core/train/trainer.h"
#include "tests/core/data_fixture.h"

namespace dtbench {
namespace {

using cuda_plan::HostMirrors;

int64_t g_floats_copied = 0;

HostMirrors& mirrors() {
  static HostMirrors registry(
      [](float* to, const float* from, int64_t count) {
        std::memcpy(to, from, static_cast<size_t>(count) * sizeof(float));
        g_floats_copied += count;
      },
      [](float* to, const float* from, int64_t count) {
        std::memcpy(to, from, static_cast<size_t>(count) * sizeof(float));
        g_floats_copied += count;
      });
  return registry;
}

// Host floats and their "device" copy, both zero-filled, registered while they live.
std::shared_ptr<float[]> allocate_mirrored(int64_t count) {
  std::shared_ptr<float[]> device = allocate_aligned(count);
  std::shared_ptr<float[]> host = allocate_aligned(count);
  mirrors().add(host.get(), device.get(), count);
  return std::shared_ptr<float[]>(host.get(), [host, device](float* p) { mirrors().remove(p); });
}

// Runs its host layer with the layer's parameters pointed at their device copies for the call.
class DeviceCopyTwin : public Layer {
 public:
  explicit DeviceCopyTwin(std::unique_ptr<Layer> host) : host_(std::move(host)) {
    set_needs_input_grad(host_->needs_input_grad());
    host_->collect_params(params_);
  }
  std::string kind() const override { return host_->kind(); }
  Shape configure(const Shape& sample_input) override { return host_->configure(sample_input); }
  const Tensor& forward(const Tensor& input, Mode mode) override {
    const OnDevice scope(params_);
    return host_->forward(input, mode);
  }
  Tensor& backward(Tensor& grad_output) override {
    const OnDevice scope(params_);
    return host_->backward(grad_output);
  }
  void collect_params(std::vector<Param*>& out) override { host_->collect_params(out); }
  void collect_buffers(std::vector<Tensor*>& out) override { host_->collect_buffers(out); }
  void reseed(uint64_t seed) override { host_->reseed(seed); }

 private:
  struct OnDevice {
    explicit OnDevice(const std::vector<Param*>& params) : params(params) {
      for (Param* p : params) {
        host_values.push_back(p->value);
        host_grads.push_back(p->grad);
        p->value = mirrors().device_address(p->value, p->numel());
        p->grad = mirrors().device_address(p->grad, p->numel());
      }
    }
    ~OnDevice() {
      for (size_t i = 0; i < params.size(); ++i) params[i]->value = host_values[i], params[i]->grad = host_grads[i];
    }
    const std::vector<Param*>& params;
    std::vector<float*> host_values, host_grads;
  };

  std::unique_ptr<Layer> host_;
  std::vector<Param*> params_;
};

// The host's optimizer over the device copies of the spans it is given.
class DeviceCopyOptimizer : public Optimizer {
 public:
  DeviceCopyOptimizer(const OptimizerConfig& config, int64_t count) : inner_(make_optimizer(config, count)) {}
  std::string name() const override { return inner_->name(); }
  std::span<const float> state() const override { return inner_->state(); }
  void step(std::span<float> params, std::span<const float> grads) override {
    const auto device_grads = mirrors().device_address(grads.data(), static_cast<int64_t>(grads.size()));
    inner_->step(mirrors().device_view(params), {device_grads, grads.size()});
    ++steps_;
  }

 private:
  std::unique_ptr<Optimizer> inner_;
};

class MirroringBackend : public DeviceBackend {
 public:
  std::string name() const override { return "mirroring"; }
  FloatAllocator allocator() const override { return allocate_mirrored; }
  std::vector<std::string> twin_kinds() const override { return {"linear"}; }
  void synchronize() override {}
  std::unique_ptr<Layer> adopt(std::unique_ptr<Layer> host) override {
    if (host->kind() != "linear") return host;
    return std::make_unique<DeviceCopyTwin>(std::move(host));
  }
  void move_to_host(std::span<float> values) override { mirrors().to_host(values); }
  void move_to_device(std::span<float> values) override { mirrors().to_device(values); }
  std::span<float> device_view(std::span<float> values) override { return mirrors().device_view(values); }
  std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, int64_t count) override {
    return std::make_unique<DeviceCopyOptimizer>(config, count);
  }
};

// Works on the host: averages this worker's gradients with a peer's that are three times them
// (so the average is twice them), reading and writing every float, so that gradients read stale
// on the host or averaged ones left there change the run.
class HostAveragingTransport : public LocalUpdateTransport {
 public:
  using LocalUpdateTransport::LocalUpdateTransport;
  std::string name() const override { return "host-averaging"; }

 protected:
  void begin(Model&) override {}
  void end(Model&) override {}
  void synchronize(Model& model, int64_t, SyncTimes&) override {
    for (float& g : model.arena().grads()) g = (g + 3.0f * g) * 0.5f;
  }
};

// Four steps of an MLP with momentum SGD through the Trainer and `transport`; the weights after stop.
std::vector<float> trained_weights(DeviceBackend* device, Transport& transport) {
  auto model = models::build("mlp", {1, 28, 28}, 10, device);
  model->initialize(11);
  auto data = data_testing::make_dataset(32, {1, 28, 28}, 10, [](int64_t i, int64_t p) { return (i * 7 + p * 3) % 256; });
  Loader loader(data, {.batch = 8, .shuffle = false}, data_testing::unit_norm(1));
  TrainerOptions options;
  options.show_progress = false;
  Trainer trainer(*model, loader, nullptr, transport, options);
  transport.start(*model);
  trainer.run({});
  transport.stop(*model);
  const auto values = model->arena().values();
  return {values.begin(), values.end()};
}

TEST(MirroredArena, TrainingOnTheDevicesCopyEndsWithTheHostsWeights) {
  const OptimizerConfig sgd{.name = "sgd", .learning_rate = 0.05f, .momentum = 0.9f};
  LocalTransport host_local(sgd);
  const std::vector<float> expected = trained_weights(nullptr, host_local);
  HostAveragingTransport host_averaging(sgd);
  const std::vector<float> expected_averaged = trained_weights(nullptr, host_averaging);

  MirroringBackend backend;
  g_floats_copied = 0;
  LocalTransport device_local(sgd);
  const std::vector<float> local = trained_weights(&backend, device_local);
  const auto count = static_cast<int64_t>(expected.size());
  EXPECT_EQ(g_floats_copied, 2 * count);  // the initial weights there, the final ones back: nothing per step

  g_floats_copied = 0;
  HostAveragingTransport averaging(sgd);
  const std::vector<float> staged = trained_weights(&backend, averaging);
  // Initial weights, after start, then gradients both ways at each of the 4 steps, final weights.
  EXPECT_EQ(g_floats_copied, 3 * count + 4 * 2 * count);

  ASSERT_EQ(local.size(), expected.size());
  ASSERT_EQ(staged.size(), expected.size());
  int64_t moved = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(local[i], expected[i]) << "weight " << i << " (no exchange)";
    ASSERT_EQ(staged[i], expected_averaged[i]) << "weight " << i << " (exchange on the host)";
  }
  auto initial = models::build("mlp", {1, 28, 28}, 10);
  initial->initialize(11);
  int64_t differ = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    moved += expected[i] != initial->arena().values()[i];
    differ += expected[i] != expected_averaged[i];
  }
  EXPECT_GT(moved, count / 2);   // the runs trained: most weights changed
  EXPECT_GT(differ, count / 2);  // and the exchange changed them
  EXPECT_EQ(mirrors().blocks(), 0);
}

}  // namespace
}  // namespace dtbench
