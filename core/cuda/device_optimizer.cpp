#include "core/cuda/device_optimizer.h"

#include <cmath>

#include "core/cuda/kernels.h"
#include "core/util/error.h"

namespace dtbench::cuda {

namespace {

class DeviceSgd : public Optimizer {
 public:
  DeviceSgd(CudaContext& context, const OptimizerConfig& config, int64_t count)
      : context_(context), config_(config), count_(config.momentum != 0.0f ? count : 0),
        velocity_(allocate_managed(count_)) {}
  std::string name() const override { return "sgd"; }
  std::span<const float> state() const override { return {velocity_.get(), static_cast<size_t>(count_)}; }
  void step(std::span<float> params, std::span<const float> grads) override {
    const cuda_bodies::SgdHyper hyper{config_.learning_rate, config_.momentum, config_.weight_decay, config_.nesterov};
    launch_sgd(params.data(), grads.data(), count_ > 0 ? velocity_.get() : nullptr, static_cast<int64_t>(params.size()),
               hyper, context_.stream());
    context_.synchronize();
    ++steps_;
  }

 private:
  CudaContext& context_;
  OptimizerConfig config_;
  int64_t count_;
  std::shared_ptr<float[]> velocity_;
};

class DeviceAdam : public Optimizer {
 public:
  DeviceAdam(CudaContext& context, const OptimizerConfig& config, int64_t count)
      : context_(context), config_(config), count_(count), moments_(allocate_managed(2 * count)) {}
  std::string name() const override { return "adam"; }
  std::span<const float> state() const override { return {moments_.get(), static_cast<size_t>(2 * count_)}; }
  void step(std::span<float> params, std::span<const float> grads) override {
    ++steps_;
    // The per-step constants exactly as the CPU optimizer derives them.
    const float correction1 = 1.0f - static_cast<float>(std::pow(config_.beta1, steps_));
    const float correction2 = 1.0f - static_cast<float>(std::pow(config_.beta2, steps_));
    const cuda_bodies::AdamHyper hyper{config_.beta1, config_.beta2, config_.weight_decay, config_.epsilon,
                                       config_.learning_rate / correction1, 1.0f / std::sqrt(correction2)};
    const auto n = static_cast<int64_t>(params.size());
    launch_adam(params.data(), grads.data(), moments_.get(), moments_.get() + count_, n, hyper, context_.stream());
    context_.synchronize();
  }

 private:
  CudaContext& context_;
  OptimizerConfig config_;
  int64_t count_;
  std::shared_ptr<float[]> moments_;  // first moments, then second moments
};

}  // namespace

std::unique_ptr<Optimizer> make_device_optimizer(CudaContext& context, const OptimizerConfig& config, int64_t count) {
  make_optimizer(config, 0);  // the CPU optimizer's checks of the hyper-parameters, with their messages
  if (config.name == "sgd") return std::make_unique<DeviceSgd>(context, config, count);
  return std::make_unique<DeviceAdam>(context, config, count);
}

}  // namespace dtbench::cuda
