#pragma once
// Central finite differences for layers: compares a layer's analytic input and parameter
// gradients with (L(x + h) − L(x − h)) / 2h, where L = Σ forward(x) ⊙ R for a fixed random R, so
// every output element contributes. Differences are accumulated in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/layers/layer.h"
#include "core/util/rng.h"

namespace dtbench::testing {

struct GradcheckOptions {
  float step = 1e-2f;       // h; float32 forward passes need a largish step
  double tolerance = 2e-2;  // on |a − n| / max(1, |a|, |n|)
  int max_checks = 64;      // elements probed per tensor (spread over the tensor)
  Mode mode = Mode::Train;
};

inline Tensor random_tensor(const Shape& shape, uint64_t seed, float scale = 1.0f) {
  Tensor tensor(shape);
  Rng rng(seed);
  for (float& value : tensor.span()) value = scale * rng.normal();
  return tensor;
}

inline double weighted_sum(const Tensor& output, const Tensor& weights) {
  double sum = 0.0;
  for (int64_t i = 0; i < output.numel(); ++i) sum += double(output.data()[i]) * weights.data()[i];
  return sum;
}

// Checks d(Σ out ⊙ R)/d(input) and d/d(every parameter). The layer must be configured and its
// parameters bound (see bind_params). Layers with state that changes per forward (dropout) must
// make the perturbed passes repeat the same randomness themselves, or be checked another way.
inline void expect_gradients_match(Layer& layer, Tensor input, const GradcheckOptions& options = {}) {
  const Tensor weights = random_tensor(layer.forward(input, options.mode).shape(), 777);
  Tensor grad_output(weights.shape());  // a copy: backward may overwrite it
  std::copy_n(weights.data(), weights.numel(), grad_output.data());
  Tensor& grad_input_ref = layer.backward(grad_output);
  Tensor grad_input(grad_input_ref.shape());
  if (layer.needs_input_grad()) std::copy_n(grad_input_ref.data(), grad_input_ref.numel(), grad_input.data());

  std::vector<Param*> params;
  layer.collect_params(params);
  std::vector<std::vector<float>> param_grads;
  for (Param* param : params) param_grads.emplace_back(param->grad, param->grad + param->numel());

  auto loss_at = [&](float* element, float value) {
    const float saved = *element;
    *element = value;
    const double loss = weighted_sum(layer.forward(input, options.mode), weights);
    *element = saved;
    return loss;
  };
  auto check = [&](const char* what, float* values, const float* analytic, int64_t count) {
    const int64_t stride = std::max<int64_t>(1, count / options.max_checks);
    for (int64_t i = 0; i < count; i += stride) {
      const double numeric = (loss_at(values + i, values[i] + options.step) -
                              loss_at(values + i, values[i] - options.step)) /
                             (2.0 * options.step);
      const double scale = std::max({1.0, std::abs(numeric), std::abs(double(analytic[i]))});
      EXPECT_LE(std::abs(numeric - analytic[i]) / scale, options.tolerance)
          << what << "[" << i << "]: analytic " << analytic[i] << " numeric " << numeric;
    }
  };
  if (layer.needs_input_grad()) check("input", input.data(), grad_input.data(), input.numel());
  for (size_t p = 0; p < params.size(); ++p) {
    check(params[p]->name.c_str(), params[p]->value, param_grads[p].data(), params[p]->numel());
  }
}

// Binds a stand-alone layer's parameters to an arena and fills them from `seed`.
inline ParamArena bind_params(Layer& layer, uint64_t seed) {
  std::vector<Param*> params;
  layer.collect_params(params);
  ParamArena arena;
  arena.bind(params);
  arena.initialize(seed);
  // Biases and batch-norm shifts start at zero; make them non-trivial so their gradients matter.
  Rng rng(seed + 1);
  for (Param* param : params) {
    if (param->init == Init::Zeros || param->init == Init::Ones) {
      for (int64_t i = 0; i < param->numel(); ++i) param->value[i] += 0.5f * rng.normal();
    }
  }
  return arena;
}

}  // namespace dtbench::testing
