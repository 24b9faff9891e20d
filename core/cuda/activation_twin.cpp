#include "core/cuda/twins.h"
#include "core/util/error.h"

namespace dtbench::cuda {

ActivationTwin::ActivationTwin(CudaContext& context, std::unique_ptr<Layer> host, cudnnActivationMode_t mode)
    : Twin(context, std::move(host)) {
  DTB_CUDA(cudnnCreateActivationDescriptor(&activation_));
  DTB_CUDA(cudnnSetActivationDescriptor(activation_, mode, CUDNN_NOT_PROPAGATE_NAN, 0.0));
}

ActivationTwin::~ActivationTwin() { cudnnDestroyActivationDescriptor(activation_); }

const Tensor& ActivationTwin::forward(const Tensor& input, Mode mode) {
  (void)mode;
  desc_.set(input.shape());
  input_ = context_.readable(input, input_staging_);
  output_ = output_buffer_.as(input.shape());
  const float one = 1.0f, zero = 0.0f;
  DTB_CUDA(cudnnActivationForward(context_.cudnn(), activation_, &one, desc_.get(), input_, &zero, desc_.get(),
                                  output_.data()));
  context_.end_operation();
  return output_;
}

Tensor& ActivationTwin::backward(Tensor& grad_output) {
  DTB_CHECK(input_ != nullptr && grad_output.shape() == output_.shape(), "{}: gradient {} for output {}", kind(),
            shape_string(grad_output.shape()), shape_string(output_.shape()));
  const float* dy = context_.readable(grad_output, grad_staging_);
  grad_input_ = grad_input_buffer_.as(output_.shape());
  const float one = 1.0f, zero = 0.0f;
  DTB_CUDA(cudnnActivationBackward(context_.cudnn(), activation_, &one, desc_.get(), output_.data(), desc_.get(),
                                   dy, desc_.get(), input_, &zero, desc_.get(), grad_input_.data()));
  context_.end_operation();
  return grad_input_;
}

}  // namespace dtbench::cuda
