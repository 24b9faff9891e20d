#pragma once
// SGD and Adam, one parameter per index: the updates of core/optim/optimizer.cpp (torch.optim's).
#include <math.h>
#include <stdint.h>

#include "core/cuda/bodies/host_device.h"

namespace dtbench::cuda_bodies {

struct SgdHyper {
  float lr, momentum, weight_decay;
  bool nesterov;
};

// velocity is null when momentum is 0 (no state), as in the CPU optimizer.
DTB_HOST_DEVICE inline void sgd_update_at(int64_t i, float* p, const float* g, float* velocity,
                                          SgdHyper h) {
  const float gi = g[i] + h.weight_decay * p[i];
  if (velocity == nullptr) {
    p[i] -= h.lr * gi;
    return;
  }
  velocity[i] = h.momentum * velocity[i] + gi;
  p[i] -= h.lr * (h.nesterov ? gi + h.momentum * velocity[i] : velocity[i]);
}

// Per-step constants the host derives from the step count (bias corrections).
struct AdamHyper {
  float beta1, beta2, weight_decay, epsilon;
  float step_size;             // lr / (1 − beta1^t)
  float inv_sqrt_correction2;  // 1 / sqrt(1 − beta2^t)
};

DTB_HOST_DEVICE inline void adam_update_at(int64_t i, float* p, const float* g, float* m, float* v,
                                           AdamHyper h) {
  const float gi = g[i] + h.weight_decay * p[i];
  m[i] = h.beta1 * m[i] + (1.0f - h.beta1) * gi;
  v[i] = h.beta2 * v[i] + (1.0f - h.beta2) * gi * gi;
  p[i] -= h.step_size * m[i] / (sqrtf(v[i]) * h.inv_sqrt_correction2 + h.epsilon);
}

}  // namespace dtbench::cuda_bodies
