#pragma once
// Elementwise glue, one element per index: dropout's mask (dropout.h) applied backward, the scaling that
// turns a summed gradient into a mean, and a residual block's join (core/layers/residual_join.h).
#include <stdint.h>

#include "core/cuda/bodies/host_device.h"

namespace dtbench::cuda_bodies {

// out = in · mask, mask holding 0 or 1 / (1 − p).
DTB_HOST_DEVICE inline void apply_mask_at(int64_t i, float* out, const float* in, const float* mask) {
  out[i] = in[i] * mask[i];
}

DTB_HOST_DEVICE inline void scale_at(int64_t i, float* x, float factor) { x[i] *= factor; }

// y = max(a + b, 0), as the host's join computes it (NaN passes, −0 stays −0).
DTB_HOST_DEVICE inline void add_relu_at(int64_t i, float* y, const float* a, const float* b) {
  const float sum = a[i] + b[i];
  y[i] = sum < 0.0f ? 0.0f : sum;
}

// The output gradient through that ReLU, in place, and copied for the shortcut branch.
DTB_HOST_DEVICE inline void relu_grad_copy_at(int64_t i, float* grad, float* copy, const float* y) {
  const float g = y[i] > 0.0f ? grad[i] : 0.0f;
  grad[i] = g;
  copy[i] = g;
}

DTB_HOST_DEVICE inline void accumulate_at(int64_t i, float* sum, const float* add) { sum[i] += add[i]; }

}  // namespace dtbench::cuda_bodies
