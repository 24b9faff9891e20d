#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "core/layers/layer.h"

namespace dtbench {

// max(x, 0). In place (output aliases input, gradient computed in grad_output's buffer) when asked:
// safe after layers whose backward does not read their own output (conv, linear, batch norm, add).
class ReLU : public Layer {
 public:
  explicit ReLU(bool in_place = false) : in_place_(in_place) {}
  std::string kind() const override { return "relu"; }
  Shape configure(const Shape& sample_input) override { return sample_input; }
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;

 private:
  bool in_place_;
  Tensor output_, grad_input_;  // output_ is a view of the input when in place
};

// An elementwise activation whose derivative is a function of its output: forward keeps the
// output and backward reads it. Tanh and Sigmoid differ only in their two kernels.
class OutputActivation : public Layer {
 public:
  using ForwardKernel = void (*)(float* out, const float* inp, int64_t n);
  using BackwardKernel = void (*)(float* dinp, const float* dout, const float* out, int64_t n);
  OutputActivation(std::string kind, ForwardKernel forward, BackwardKernel backward)
      : kind_(std::move(kind)), forward_(forward), backward_(backward) {}
  std::string kind() const override { return kind_; }
  Shape configure(const Shape& sample_input) override { return sample_input; }
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;

 private:
  std::string kind_;
  ForwardKernel forward_;
  BackwardKernel backward_;
  Tensor output_, grad_input_;
};

class Tanh : public OutputActivation {
 public:
  Tanh();
};

// 1 / (1 + exp(−x)), the logistic function.
class Sigmoid : public OutputActivation {
 public:
  Sigmoid();
};

// Inverted dropout: in training, zeroes each element with probability p and scales the rest by
// 1/(1−p); identity in evaluation. The mask comes from a generator the model seeds.
class Dropout : public Layer {
 public:
  explicit Dropout(float probability);
  std::string kind() const override { return "dropout"; }
  Shape configure(const Shape& sample_input) override { return sample_input; }
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  void reseed(uint64_t seed) override;
  float probability() const { return probability_; }  // for a device twin

 private:
  float probability_;
  uint64_t seed_ = 0;
  uint64_t calls_ = 0;
  Mode last_mode_ = Mode::Eval;
  Tensor output_, grad_input_, mask_;
};

// (B, C, H, W) -> (B, C·H·W) without copying.
class Flatten : public Layer {
 public:
  std::string kind() const override { return "flatten"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;

 private:
  Shape input_shape_;
  Tensor output_, grad_input_;
};

}  // namespace dtbench
