#pragma once
// `dtbench bench step --dump-step DIR`: one training step's inputs and gradients written out, for
// an independent computation of the same step (scripts/fp64_step_check.py, PyTorch in float64).
#include <cstdint>
#include <filesystem>
#include <span>

#include "core/models/model.h"

namespace dtbench {

// Runs one forward (train mode), loss and backward of `model` (initialised, on the host) on
// `images` and `labels`, and writes into `dir`: parameters.json (the arena's layout, as the PyTorch
// engine reads it), weights.bin and grads.bin (the arena's values and gradients, float32),
// input.bin (float32), labels.bin (int32) and step.json (model, input shape, batch, classes, loss).
void dump_step(Model& model, const Tensor& images, std::span<const int32_t> labels, const std::filesystem::path& dir);

}  // namespace dtbench
