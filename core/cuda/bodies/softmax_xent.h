#pragma once
// Fused softmax cross-entropy, one row (sample) per index: the arithmetic of
// core/kernels/loss.cpp (max subtracted, sums in double), with the row's loss and hit written out
// so that the sum over rows is taken afterwards in a fixed order.
#include <math.h>
#include <stdint.h>

#include "core/cuda/bodies/host_device.h"

namespace dtbench::cuda_bodies {

// Row `b` of logits (B, K) with labels[b] in [0, K). Writes row_loss[b] = −log softmax[label],
// row_correct[b] = 1 when the first maximal logit is the label, and, when dlogits is not null,
// dlogits row b = (softmax − onehot) · grad_scale (dlogits may alias logits).
DTB_HOST_DEVICE inline void softmax_xent_row(int64_t b, float* dlogits, const float* logits,
                                             const int32_t* labels, float grad_scale, int64_t K,
                                             double* row_loss, int32_t* row_correct) {
  const float* x = logits + b * K;
  const int64_t label = labels[b];
  int64_t argmax = 0;
  for (int64_t k = 1; k < K; ++k) argmax = x[k] > x[argmax] ? k : argmax;
  const float max = x[argmax];
  const double label_logit = double(x[label]) - max;  // read before dlogits may overwrite x
  double exp_sum = 0.0;
  for (int64_t k = 0; k < K; ++k) exp_sum += ::exp(double(x[k]) - max);
  row_loss[b] = ::log(exp_sum) - label_logit;
  row_correct[b] = argmax == label ? 1 : 0;
  if (dlogits == nullptr) return;
  float* dx = dlogits + b * K;
  const double scale = grad_scale / exp_sum;
  for (int64_t k = 0; k < K; ++k) dx[k] = static_cast<float>(::exp(double(x[k]) - max) * scale);
  dx[label] -= grad_scale;
}

}  // namespace dtbench::cuda_bodies
