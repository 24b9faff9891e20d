#include "core/cuda/device_loss.h"

#include <algorithm>

#include "core/cuda/kernels.h"

namespace dtbench::cuda {

void DeviceLoss::reserve(int64_t rows) {
  if (rows <= rows_) return;
  labels_ = managed_array<int32_t>(rows, "the loss's labels");
  row_loss_ = managed_array<double>(rows, "the loss's rows");
  row_correct_ = managed_array<int32_t>(rows, "the loss's hits");
  rows_ = rows;
}

std::optional<LossResult> DeviceLoss::compute(const Tensor& logits, std::span<const int32_t> labels,
                                              Tensor* grad_logits) {
  check_loss_inputs(logits, labels);
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  if (rows == 0 || !context_.device_accessible(logits.data())) return std::nullopt;
  reserve(rows);
  // The host writes the labels into managed memory: the twins left the stream idle (each one
  // synchronises after it runs), which devices without concurrent managed access require.
  std::copy(labels.begin(), labels.end(), labels_.get());
  float* dlogits = nullptr;
  if (grad_logits != nullptr) {
    *grad_logits = grad_.as(logits.shape());
    dlogits = grad_logits->data();
  }
  launch_softmax_xent(dlogits, logits.data(), labels_.get(), 1.0f / static_cast<float>(rows), rows, classes,
                      row_loss_.get(), row_correct_.get(), context_.stream());
  context_.synchronize();
  LossResult result;
  for (int64_t b = 0; b < rows; ++b) {
    result.loss += row_loss_[b];
    result.correct += row_correct_[b];
  }
  result.loss /= static_cast<double>(rows);
  return result;
}

}  // namespace dtbench::cuda
