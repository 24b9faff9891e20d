#pragma once
#include <cstdint>
#include <span>

#include "core/tensor/tensor.h"

namespace dtbench {

struct LossResult {
  double loss = 0.0;    // mean over the batch
  int64_t correct = 0;  // samples whose arg-max logit equals the label
};

// InputError unless logits are (B, K) and there are B labels, each in [0, K).
void check_loss_inputs(const Tensor& logits, std::span<const int32_t> labels);

// Softmax cross-entropy fused with its gradient: logits (B, K), labels in [0, K). When
// `grad_logits` is given it receives dL/dlogits of the mean loss, (softmax − onehot) / B.
// Computed with the max subtracted, so large logits do not overflow.
LossResult softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                 Tensor* grad_logits);

}  // namespace dtbench
