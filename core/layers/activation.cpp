#include "core/layers/activation.h"

#include "core/cuda/bodies/dropout.h"
#include "core/kernels/activation.h"
#include "core/util/error.h"

namespace dtbench {

const Tensor& ReLU::forward(const Tensor& input, Mode mode) {
  (void)mode;
  if (in_place_) {
    // The output overwrites the input. forward takes `const Tensor&` because most layers only
    // read their input; an in-place layer is placed by the model builder only where the previous
    // layer's output is its own mutable buffer that nothing reads again (its backward does not
    // need it), so writing through the const reference is sound.
    output_ = Tensor::view(const_cast<float*>(input.data()), input.shape());
  } else {
    output_.resize(input.shape());
  }
  kernels::relu_forward(output_.data(), input.data(), input.numel());
  return output_;
}

Tensor& ReLU::backward(Tensor& grad_output) {
  DTB_CHECK(grad_output.shape() == output_.shape(), "relu backward: gradient {} for output {}",
            shape_string(grad_output.shape()), shape_string(output_.shape()));
  if (!needs_input_grad_) {
    grad_input_ = Tensor();
    return grad_input_;
  }
  // The mask is read from the output, which stays valid in place too: x > 0 exactly where y > 0.
  Tensor& grad_input = in_place_ ? grad_output : grad_input_;
  if (!in_place_) grad_input_.resize(grad_output.shape());
  kernels::relu_backward(grad_input.data(), grad_output.data(), output_.data(), output_.numel());
  return grad_input;
}

const Tensor& OutputActivation::forward(const Tensor& input, Mode mode) {
  (void)mode;
  output_.resize(input.shape());
  forward_(output_.data(), input.data(), input.numel());
  return output_;
}

Tensor& OutputActivation::backward(Tensor& grad_output) {
  DTB_CHECK(grad_output.shape() == output_.shape(), "{} backward: gradient {} for output {}", kind_,
            shape_string(grad_output.shape()), shape_string(output_.shape()));
  grad_input_.resize(grad_output.shape());
  backward_(grad_input_.data(), grad_output.data(), output_.data(), output_.numel());
  return grad_input_;
}

Tanh::Tanh() : OutputActivation("tanh", kernels::tanh_forward, kernels::tanh_backward) {}

Sigmoid::Sigmoid() : OutputActivation("sigmoid", kernels::sigmoid_forward, kernels::sigmoid_backward) {}

Dropout::Dropout(float probability) : probability_(probability) {
  if (!(probability >= 0.0f && probability <= 1.0f)) {
    fail_input("dropout: probability must be in [0, 1], got {}", probability);
  }
}

void Dropout::reseed(uint64_t seed) {
  seed_ = seed;
  calls_ = 0;
}

const Tensor& Dropout::forward(const Tensor& input, Mode mode) {
  last_mode_ = mode;
  if (mode == Mode::Eval) return input;
  // Each training pass draws from its own counter, (seed, pass number), so a run is reproducible
  // from the seed alone, whatever happened in evaluation passes in between; the draw is the
  // device's (core/cuda/bodies/dropout.h), element for element.
  const cuda_bodies::DropoutDraw draw{.seed = seed_, .call = calls_++, .probability = probability_};
  mask_.resize(input.shape());
  output_.resize(input.shape());
  const int64_t n = input.numel();
  for (int64_t group = 0; group < cuda_bodies::dropout_groups(n); ++group) {
    cuda_bodies::dropout_forward_group_at(group, output_.data(), mask_.data(), input.data(), n, draw);
  }
  return output_;
}

Tensor& Dropout::backward(Tensor& grad_output) {
  if (last_mode_ == Mode::Eval) return grad_output;
  DTB_CHECK(grad_output.shape() == mask_.shape(), "dropout backward: gradient {} for mask {}",
            shape_string(grad_output.shape()), shape_string(mask_.shape()));
  grad_input_.resize(grad_output.shape());
  kernels::apply_mask(grad_input_.data(), grad_output.data(), mask_.data(), mask_.numel());
  return grad_input_;
}

Shape Flatten::configure(const Shape& sample_input) {
  if (sample_input.empty()) fail_input("flatten: expects a sample of rank >= 1, got ()");
  return {element_count(sample_input)};
}

const Tensor& Flatten::forward(const Tensor& input, Mode mode) {
  (void)mode;
  DTB_CHECK(input.rank() >= 1, "flatten got a scalar");
  input_shape_ = input.shape();
  const int64_t batch = input.dim(0);
  output_ = input.reshaped({batch, batch > 0 ? input.numel() / batch : 0});
  return output_;
}

Tensor& Flatten::backward(Tensor& grad_output) {
  grad_input_ = grad_output.reshaped(input_shape_);
  return grad_input_;
}

}  // namespace dtbench
