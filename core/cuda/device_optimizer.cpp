#include "core/cuda/device_optimizer.h"

#include <cmath>

#include "core/cuda/kernels.h"
#include "core/util/error.h"

namespace dtbench::cuda {

namespace {

// State in mirrored memory: the device's copy is the one the kernels update.
class MirroredState {
 public:
  explicit MirroredState(int64_t count) : count_(count), host_(allocate_mirrored(count)) {}
  // The device's copy, null when there is no state.
  float* on_device() const { return count_ > 0 ? host_mirrors().device_address(host_.get(), count_) : nullptr; }
  std::span<const float> to_host() const {
    const std::span<float> values(host_.get(), static_cast<size_t>(count_));
    host_mirrors().to_host(values);
    return values;
  }
  void to_device() const { host_mirrors().to_device({host_.get(), static_cast<size_t>(count_)}); }

 private:
  int64_t count_;
  std::shared_ptr<float[]> host_;
};

class DeviceSgd : public Optimizer {
 public:
  DeviceSgd(CudaContext& context, const OptimizerConfig& config, int64_t count)
      : context_(context), config_(config), velocity_(config.momentum != 0.0f ? count : 0) {}
  std::string name() const override { return "sgd"; }
  std::span<const float> state() const override { return velocity_.to_host(); }
  void step(std::span<float> params, std::span<const float> grads) override {
    const cuda_bodies::SgdHyper hyper{config_.learning_rate, config_.momentum, config_.weight_decay, config_.nesterov};
    launch_sgd(context_.on_device(params).data(), on_device(grads), velocity_.on_device(),
               static_cast<int64_t>(params.size()), hyper, context_.stream());
    context_.synchronize();
    ++steps_;
  }

 protected:
  void restored() override { velocity_.to_device(); }

 private:
  const float* on_device(std::span<const float> grads) const {
    return context_.on_device(grads.data(), static_cast<int64_t>(grads.size()));
  }

  CudaContext& context_;
  OptimizerConfig config_;
  MirroredState velocity_;
};

class DeviceAdam : public Optimizer {
 public:
  DeviceAdam(CudaContext& context, const OptimizerConfig& config, int64_t count)
      : context_(context), config_(config), count_(count), moments_(2 * count) {}
  std::string name() const override { return "adam"; }
  std::span<const float> state() const override { return moments_.to_host(); }
  void step(std::span<float> params, std::span<const float> grads) override {
    ++steps_;
    // The per-step constants exactly as the CPU optimizer derives them.
    const float correction1 = 1.0f - static_cast<float>(std::pow(config_.beta1, steps_));
    const float correction2 = 1.0f - static_cast<float>(std::pow(config_.beta2, steps_));
    const cuda_bodies::AdamHyper hyper{config_.beta1, config_.beta2, config_.weight_decay, config_.epsilon,
                                       config_.learning_rate / correction1, 1.0f / std::sqrt(correction2)};
    const auto n = static_cast<int64_t>(params.size());
    float* moments = moments_.on_device();
    launch_adam(context_.on_device(params).data(), context_.on_device(grads.data(), n), moments, moments + count_, n,
                hyper, context_.stream());
    context_.synchronize();
  }

 protected:
  void restored() override { moments_.to_device(); }

 private:
  CudaContext& context_;
  OptimizerConfig config_;
  int64_t count_;
  MirroredState moments_;  // first moments, then second moments
};

}  // namespace

std::unique_ptr<Optimizer> make_device_optimizer(CudaContext& context, const OptimizerConfig& config, int64_t count) {
  make_optimizer(config, 0);  // the CPU optimizer's checks of the hyper-parameters, with their messages
  if (config.name == "sgd") return std::make_unique<DeviceSgd>(context, config, count);
  return std::make_unique<DeviceAdam>(context, config, count);
}

}  // namespace dtbench::cuda
