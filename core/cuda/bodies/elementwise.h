#pragma once
// Elementwise glue, one element per index: dropout's mask (drawn by the host's generator, as on
// the CPU, so both devices drop the same units) applied forward and backward, and the scaling that
// turns a summed gradient into a mean.
#include <stdint.h>

#include "core/cuda/bodies/host_device.h"

namespace dtbench::cuda_bodies {

// out = in · mask, mask holding 0 or 1 / (1 − p).
DTB_HOST_DEVICE inline void apply_mask_at(int64_t i, float* out, const float* in, const float* mask) {
  out[i] = in[i] * mask[i];
}

DTB_HOST_DEVICE inline void scale_at(int64_t i, float* x, float factor) { x[i] *= factor; }

}  // namespace dtbench::cuda_bodies
