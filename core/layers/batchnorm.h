#pragma once
#include "core/layers/layer.h"

namespace dtbench {

// Batch normalisation over (B, H, W) per channel, NCHW. Training uses the batch statistics
// (biased variance to normalise, unbiased to update the running variance, as PyTorch does) and
// updates running_mean / running_var with `momentum`; evaluation uses the running statistics.
// gamma (C) starts at 1, beta (C) at 0. Backward writes the input gradient over grad_output (it
// needs only the input and the saved statistics), so the layer keeps no gradient buffer. Training
// needs more than one value per channel (B·H·W > 1), as in PyTorch.
class BatchNorm2d : public Layer {
 public:
  explicit BatchNorm2d(int64_t channels, float momentum = 0.1f, float epsilon = 1e-5f);
  std::string kind() const override { return "batchnorm2d"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  void collect_params(std::vector<Param*>& out) override;
  void collect_buffers(std::vector<Tensor*>& out) override;
  int64_t macs_per_sample() const override;

  const Tensor& running_mean() const { return running_mean_; }
  const Tensor& running_var() const { return running_var_; }
  float momentum() const { return momentum_; }  // for a device twin
  float epsilon() const { return epsilon_; }

 private:
  int64_t channels_;
  float momentum_, epsilon_;
  int64_t plane_ = 0;  // H·W
  Param gamma_, beta_;
  Tensor running_mean_, running_var_;
  // (C): the statistics the last forward normalised with (the batch's in training, the running
  // ones in evaluation). Backward recomputes x̂ from them and the input instead of keeping x̂.
  Tensor batch_mean_, batch_inv_std_;
  Tensor batch_var_;  // (C), biased; the last training forward's, for the running variance
  Mode last_mode_ = Mode::Eval;
  const Tensor* input_ = nullptr;
  Tensor output_;
  Tensor no_grad_;  // empty: returned when the input gradient is not needed
};

}  // namespace dtbench
