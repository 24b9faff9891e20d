#include "core/optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/util/error.h"

namespace dtbench {

namespace {

// torch.optim.SGD's update: g += wd·p; v = μ·v + g; p -= lr·(nesterov ? g + μ·v : v).
class Sgd : public Optimizer {
 public:
  Sgd(const OptimizerConfig& config, int64_t count)
      : config_(config), velocity_(config.momentum != 0.0f ? count : 0, 0.0f) {}

  std::string name() const override { return "sgd"; }
  std::span<const float> state() const override { return velocity_; }

  void step(std::span<float> params, std::span<const float> grads) override {
    begin_step();
    step_part(0, params, grads);
  }
  void begin_step() override { ++steps_; }
  void step_part(int64_t offset, std::span<float> params, std::span<const float> grads) override {
    const float lr = config_.learning_rate, mu = config_.momentum, wd = config_.weight_decay;
    const size_t count = params.size();
    float* p = params.data();
    const float* g = grads.data();
    if (mu == 0.0f) {
      for (size_t i = 0; i < count; ++i) p[i] -= lr * (g[i] + wd * p[i]);
    } else {
      float* v = velocity_.data() + offset;
      // PyTorch starts the velocity at the first gradient, not at μ·0 + g; same thing here.
      for (size_t i = 0; i < count; ++i) {
        const float gi = g[i] + wd * p[i];
        v[i] = mu * v[i] + gi;
        p[i] -= lr * (config_.nesterov ? gi + mu * v[i] : v[i]);
      }
    }
  }

 private:
  OptimizerConfig config_;
  std::vector<float> velocity_;
};

// Adam (Kingma & Ba 2015) with bias correction, as torch.optim.Adam computes it.
class Adam : public Optimizer {
 public:
  Adam(const OptimizerConfig& config, int64_t count) : config_(config), moments_(2 * count, 0.0f) {}

  std::string name() const override { return "adam"; }
  std::span<const float> state() const override { return moments_; }

  void step(std::span<float> params, std::span<const float> grads) override {
    begin_step();
    step_part(0, params, grads);
  }
  void begin_step() override {
    ++steps_;
    const float correction1 = 1.0f - static_cast<float>(std::pow(config_.beta1, steps_));
    const float correction2 = 1.0f - static_cast<float>(std::pow(config_.beta2, steps_));
    step_size_ = config_.learning_rate / correction1;
    inv_sqrt_correction2_ = 1.0f / std::sqrt(correction2);
  }
  void step_part(int64_t offset, std::span<float> params, std::span<const float> grads) override {
    const size_t count = params.size();
    const float b1 = config_.beta1, b2 = config_.beta2, wd = config_.weight_decay;
    // Locals: stores through p, m, v cannot change them.
    const float step_size = step_size_, inv_sqrt_correction2 = inv_sqrt_correction2_, epsilon = config_.epsilon;
    float* __restrict p = params.data();
    const float* __restrict g = grads.data();
    float* __restrict m = moments_.data() + offset;
    float* __restrict v = moments_.data() + moments_.size() / 2 + offset;
    for (size_t i = 0; i < count; ++i) {
      const float gi = g[i] + wd * p[i];
      m[i] = b1 * m[i] + (1.0f - b1) * gi;
      v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
      p[i] -= step_size * m[i] / (std::sqrt(v[i]) * inv_sqrt_correction2 + epsilon);
    }
  }

 private:
  OptimizerConfig config_;
  std::vector<float> moments_;  // first moments, then second moments
  float step_size_ = 0.0f;      // this step's, set by begin_step()
  float inv_sqrt_correction2_ = 0.0f;
};

}  // namespace

void Optimizer::begin_step() { throw LogicError(fmt::format("optimizer {} cannot step in parts", name())); }

void Optimizer::step_part(int64_t, std::span<float>, std::span<const float>) {
  throw LogicError(fmt::format("optimizer {} cannot step in parts", name()));
}

void Optimizer::restore(std::span<const float> state, int64_t steps) {
  const std::span<const float> own = this->state();
  if (state.size() != own.size()) {
    fail_input("optimizer {}: cannot restore {} floats of state into {}", name(), state.size(), own.size());
  }
  if (steps < 0) fail_input("optimizer {}: cannot restore a step count of {}", name(), steps);
  // state() views storage each optimizer owns and sizes at construction; writing through it is
  // writing that state, with no setter per optimizer.
  std::copy(state.begin(), state.end(), const_cast<float*>(own.data()));
  steps_ = steps;
  restored();
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, int64_t count) {
  if (!(config.learning_rate > 0.0f)) fail_input("optimizer.lr must be > 0, got {}", config.learning_rate);
  if (config.momentum < 0.0f || config.momentum >= 1.0f) {
    fail_input("optimizer.momentum must be in [0, 1), got {}", config.momentum);
  }
  if (config.weight_decay < 0.0f) fail_input("optimizer.weight_decay must be >= 0, got {}", config.weight_decay);
  if (config.name == "sgd") return std::make_unique<Sgd>(config, count);
  if (config.name == "adam") return std::make_unique<Adam>(config, count);
  fail_input("optimizer.name '{}' is not known; choose sgd or adam", config.name);
}

}  // namespace dtbench
