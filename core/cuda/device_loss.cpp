#include "core/cuda/device_loss.h"

#include "core/cuda/kernels.h"

namespace dtbench::cuda {

void DeviceLoss::reserve(int64_t rows) {
  if (rows <= rows_) return;
  labels_ = device_array<int32_t>(rows, "the loss's labels");
  row_loss_ = device_array<double>(rows, "the loss's rows");
  row_correct_ = device_array<int32_t>(rows, "the loss's hits");
  rows_ = rows;
}

std::optional<LossResult> DeviceLoss::compute(const Tensor& logits, std::span<const int32_t> labels,
                                              Tensor* grad_logits) {
  check_loss_inputs(logits, labels);
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  if (rows == 0 || !context_.device_accessible(logits.data())) return std::nullopt;
  reserve(rows);
  context_.upload(labels.data(), labels_.get(), rows * static_cast<int64_t>(sizeof(int32_t)));
  float* dlogits = nullptr;
  if (grad_logits != nullptr) {
    *grad_logits = grad_.as(logits.shape());
    dlogits = grad_logits->data();
  }
  launch_softmax_xent(dlogits, logits.data(), labels_.get(), 1.0f / static_cast<float>(rows), rows, classes,
                      row_loss_.get(), row_correct_.get(), context_.stream());
  host_row_loss_.resize(static_cast<size_t>(rows));
  host_row_correct_.resize(static_cast<size_t>(rows));
  const auto stream = context_.stream();
  DTB_CUDA(cudaMemcpyAsync(host_row_loss_.data(), row_loss_.get(), static_cast<size_t>(rows) * sizeof(double),
                           cudaMemcpyDeviceToHost, stream));
  DTB_CUDA(cudaMemcpyAsync(host_row_correct_.data(), row_correct_.get(), static_cast<size_t>(rows) * sizeof(int32_t),
                           cudaMemcpyDeviceToHost, stream));
  context_.synchronize();
  LossResult result;
  for (int64_t b = 0; b < rows; ++b) {
    result.loss += host_row_loss_[static_cast<size_t>(b)];
    result.correct += host_row_correct_[static_cast<size_t>(b)];
  }
  result.loss /= static_cast<double>(rows);
  return result;
}

}  // namespace dtbench::cuda
