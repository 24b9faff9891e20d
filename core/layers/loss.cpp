#include "core/layers/loss.h"

#include "core/kernels/loss.h"
#include "core/util/error.h"

namespace dtbench {

void check_loss_inputs(const Tensor& logits, std::span<const int32_t> labels) {
  if (logits.rank() != 2) {
    fail_input("softmax cross-entropy: logits must be (B, K), got {}",
               shape_string(logits.shape()));
  }
  const int64_t batch = logits.dim(0);
  const int64_t classes = logits.dim(1);
  if (static_cast<int64_t>(labels.size()) != batch) {
    fail_input("softmax cross-entropy: {} labels for logits {}", labels.size(),
               shape_string(logits.shape()));
  }
  for (int64_t b = 0; b < batch; ++b) {
    if (labels[b] < 0 || labels[b] >= classes) {
      fail_input(
          "softmax cross-entropy: label {} of sample {} is outside [0, {}) for K = {} classes",
          labels[b], b, classes, classes);
    }
  }
}

LossResult softmax_cross_entropy(const Tensor& logits, std::span<const int32_t> labels,
                                 Tensor* grad_logits) {
  check_loss_inputs(logits, labels);
  const int64_t batch = logits.dim(0);
  const int64_t classes = logits.dim(1);
  LossResult result;
  if (batch == 0) {
    if (grad_logits != nullptr) grad_logits->resize(logits.shape());
    return result;
  }
  float* grad = nullptr;
  if (grad_logits != nullptr) {
    grad_logits->resize(logits.shape());
    grad = grad_logits->data();
  }
  const kernels::CrossEntropySums sums = kernels::softmax_crossentropy(
      grad, logits.data(), labels.data(), 1.0f / static_cast<float>(batch), batch, classes);
  result.loss = sums.loss_sum / static_cast<double>(batch);
  result.correct = sums.correct;
  return result;
}

}  // namespace dtbench
