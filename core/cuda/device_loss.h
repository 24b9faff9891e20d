#pragma once
// The batch's softmax cross-entropy on the GPU: one fused kernel (bodies/softmax_xent.h) writes
// each row's loss and hit and the logits' gradient; the host then sums the rows in order, as the
// host's loss does, so both report the same figure.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/cuda/context.h"
#include "core/layers/loss.h"

namespace dtbench::cuda {

class DeviceLoss {
 public:
  explicit DeviceLoss(CudaContext& context) : context_(context) {}
  // nullopt when the logits are not where a kernel can read them (a host layer made them).
  std::optional<LossResult> compute(const Tensor& logits, std::span<const int32_t> labels, Tensor* grad_logits);

 private:
  // Device memory for the labels and the per-row results, grown to the largest batch seen.
  void reserve(int64_t rows);

  CudaContext& context_;
  DeviceBuffer grad_;
  std::shared_ptr<int32_t[]> labels_;
  std::shared_ptr<double[]> row_loss_;
  std::shared_ptr<int32_t[]> row_correct_;
  int64_t rows_ = 0;
  std::vector<double> host_row_loss_;  // the rows' results copied back, summed on the host
  std::vector<int32_t> host_row_correct_;
};

}  // namespace dtbench::cuda
