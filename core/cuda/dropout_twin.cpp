#include "core/cuda/kernels.h"
#include "core/cuda/twins.h"
#include "core/kernels/activation.h"
#include "core/layers/activation.h"
#include "core/util/error.h"
#include "core/util/rng.h"

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
  // The CPU layer's stream for this pass, (seed, pass number), drawn on the host and copied over.
  Rng rng = Rng::derive(seed_, 0xD0, calls_++);
  host_mask_.resize(static_cast<size_t>(input.numel()));
  kernels::dropout_mask(host_mask_.data(), rng, probability_, input.numel());
  mask_ = mask_buffer_.as(input.shape());
  context_.upload(host_mask_.data(), mask_.data(), input.numel() * static_cast<int64_t>(sizeof(float)));
  const float* x = context_.readable(input, input_staging_);
  output_ = output_buffer_.as(input.shape());
  launch_apply_mask(output_.data(), x, mask_.data(), input.numel(), context_.stream());
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
