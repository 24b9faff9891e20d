#pragma once
#include "core/layers/layer.h"

namespace dtbench {

// y = x W^T + b. Input (B, in) — or any (B, ...) whose trailing size is `in` — output (B, out).
// weight (out, in), bias (out). Forward and both gradients are single cblas_sgemm calls.
class Linear : public Layer {
 public:
  Linear(int64_t in_features, int64_t out_features, Init weight_init = Init::KaimingNormal);
  std::string kind() const override { return "linear"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  void collect_params(std::vector<Param*>& out) override;
  int64_t macs_per_sample() const override { return in_ * out_; }
  // The configuration, for a device twin (core/device/device.h).
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

 private:
  int64_t in_, out_;
  Param weight_, bias_;
  const Tensor* input_ = nullptr;
  Tensor output_, grad_input_;
};

}  // namespace dtbench
