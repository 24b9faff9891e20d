#pragma once
// How far one training step's gradients may move under fp32 rounding alone, for the GPU model-step
// check (Gpu.AModelStepMatchesTheCpuStep): measured on the CPU against float64 by
// `/usr/bin/python3 scripts/fp64_step_check.py resnet18:4 vgg16:4 resnet50:4 resnet50:32`
// (dtbench's fp32 CPU step and PyTorch float64 from the same weights, input and labels; the
// figures and what they mean are in docs/gpu.md, "The model step against float64").
//
// Error: the largest gradient difference over the arena / the largest float64 gradient. A step
// with batch norm over few values and ReLUs near ties is ill-conditioned: at batch 4 ResNet-18's and
// ResNet-50's float64 gradients move by about 1 % when the input is nudged by a relative 1e-6, so
// two fp32 computations of the same step (host and device, or two libraries) may differ by that
// much with neither wrong; ResNet-50 on random input stays so at batch 32 (1.3 %), so a larger
// batch is no way out, and the bound follows the measured error instead.
#include <algorithm>
#include <cstdint>
#include <string>

namespace dtbench::testing {

struct ModelStepReference {
  int64_t batch = 4;
  double fp32_error = 0.0;  // the larger of dtbench's and PyTorch's fp32 CPU step against float64 at that batch
};

inline ModelStepReference model_step_reference(const std::string& model) {
  if (model == "resnet18") return {.batch = 4, .fp32_error = 1.0e-2};
  if (model == "resnet50") return {.batch = 4, .fp32_error = 1.7e-2};
  if (model == "vgg16") return {.batch = 4, .fp32_error = 1.2e-5};
  return {.batch = 4, .fp32_error = 1e-6};  // mlp, lenet5, alexnet: no batch norm
}

// The device's gradients may differ from the host's by at most this × the largest host gradient:
// 1e-3 for a well-conditioned step, or 3 × what fp32 rounding alone moves it where that is more.
inline double model_step_bound(const ModelStepReference& reference) {
  return std::max(1e-3, 3.0 * reference.fp32_error);
}

}  // namespace dtbench::testing
