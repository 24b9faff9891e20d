#pragma once
// Where two computations of one step's gradients part (a device's against the host's): per
// parameter, the largest absolute difference, the parameter's largest gradient and their ratio,
// as the GPU model-step check prints them when it fails.
#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/tensor/param_arena.h"

namespace dtbench::testing {

struct ParamGradientError {
  std::string name;
  double max_abs_error = 0.0;  // max |got − expected| over the parameter's elements
  double max_abs_grad = 0.0;   // max |expected|
  double relative() const { return max_abs_error / std::max(max_abs_grad, 1e-30); }
};

// `expected` and `got` are two arenas' gradient blocks of one layout (`params`' offsets).
inline std::vector<ParamGradientError> param_gradient_errors(const std::vector<Param*>& params,
                                                              std::span<const float> expected,
                                                              std::span<const float> got) {
  std::vector<ParamGradientError> errors;
  for (const Param* p : params) {
    ParamGradientError e{.name = p->name};
    for (int64_t i = p->offset; i < p->offset + p->numel(); ++i) {
      const auto k = static_cast<size_t>(i);
      e.max_abs_error = std::max(e.max_abs_error, std::fabs(double(got[k]) - double(expected[k])));
      e.max_abs_grad = std::max(e.max_abs_grad, std::fabs(double(expected[k])));
    }
    errors.push_back(e);
  }
  return errors;
}

// One row per parameter, in the model's order (input to output), the worst relative one marked.
inline std::string gradient_errors_table(const std::vector<ParamGradientError>& errors) {
  size_t worst = 0;
  for (size_t i = 1; i < errors.size(); ++i) {
    if (errors[i].relative() > errors[worst].relative()) worst = i;
  }
  std::string text = fmt::format("{:<40} {:>12} {:>12} {:>10}\n", "parameter", "max |error|", "max |grad|",
                                 "relative");
  for (size_t i = 0; i < errors.size(); ++i) {
    const ParamGradientError& e = errors[i];
    text += fmt::format("{:<40} {:>12.4g} {:>12.4g} {:>10.3g}{}\n", e.name, e.max_abs_error, e.max_abs_grad,
                        e.relative(), i == worst ? "  <- worst" : "");
  }
  return text;
}

}  // namespace dtbench::testing
