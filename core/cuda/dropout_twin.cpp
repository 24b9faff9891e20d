#include "core/cuda/kernels.h"
#include "core/cuda/twins.h"
#include "core/layers/activation.h"
#include "core/util/error.h"

namespace dtbench::cuda {

DropoutTwin::DropoutTwin(CudaContext& context, std::unique_ptr<Layer> host)
    : Twin(context, std::move(host)), probability_(dynamic_cast<const Dropout&>(*host_).probability()) {}

void DropoutTwin::reseed(uint64_t seed) {
  host_->reseed(seed);
  seed_ = seed;
  calls_ = 0;
}

const Tensor& DropoutTwin::forward(const Tensor& input, Mode mode) {
  last_mode_ = mode;
  if (mode == Mode::Eval) return input;
  // The CPU layer's draw for this pass, (seed, pass number), element for element, on the device.
  const cuda_bodies::DropoutDraw draw{.seed = seed_, .call = calls_++, .probability = probability_};
  mask_ = mask_buffer_.as(input.shape());
  const float* x = context_.readable(input, input_staging_);
  output_ = output_buffer_.as(input.shape());
  launch_dropout_forward(output_.data(), mask_.data(), x, input.numel(), draw, context_.stream());
  context_.end_operation();
  return output_;
}

Tensor& DropoutTwin::backward(Tensor& grad_output) {
  if (last_mode_ == Mode::Eval) return grad_output;
  DTB_CHECK(grad_output.shape() == mask_.shape(), "dropout backward: gradient {} for mask {}",
            shape_string(grad_output.shape()), shape_string(mask_.shape()));
  const float* dy = context_.readable(grad_output, grad_staging_);
  grad_input_ = grad_input_buffer_.as(grad_output.shape());
  launch_apply_mask(grad_input_.data(), dy, mask_.data(), mask_.numel(), context_.stream());
  context_.end_operation();
  return grad_input_;
}

}  // namespace dtbench::cuda
