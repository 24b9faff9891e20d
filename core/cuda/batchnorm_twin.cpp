#include "core/cuda/twins.h"
#include "core/layers/batchnorm.h"
#include "core/util/error.h"

namespace dtbench::cuda {

namespace {
constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL;
}  // namespace

BatchNormTwin::BatchNormTwin(CudaContext& context, std::unique_ptr<Layer> host) : Twin(context, std::move(host)) {
  const auto& norm = dynamic_cast<const BatchNorm2d&>(*host_);
  momentum_ = norm.momentum();
  epsilon_ = norm.epsilon();
  std::vector<Tensor*> buffers;
  host_->collect_buffers(buffers);  // running mean, running variance
  DTB_CHECK(buffers.size() == 2, "batchnorm2d has {} buffers", buffers.size());
  running_mean_ = buffers[0];
  running_var_ = buffers[1];
}

const Tensor& BatchNormTwin::forward(const Tensor& input, Mode mode) {
  DTB_CHECK(input.rank() == 4 && input.dim(1) == running_mean_->numel(), "batchnorm2d ({} channels) given input {}",
            running_mean_->numel(), shape_string(input.shape()));
  const int64_t channels = input.dim(1);
  if (input.shape() != input_shape_) {
    input_shape_ = input.shape();
    desc_.set(input_shape_);
    DTB_CUDA(cudnnDeriveBNTensorDescriptor(channel_desc_.get(), desc_.get(), kMode));
  }
  Tensor statistics = statistics_.as({4, channels});
  float* running_mean = statistics.data();
  float* running_var = running_mean + channels;
  float* saved_mean = running_var + channels;
  float* saved_inv_std = saved_mean + channels;
  const size_t channel_bytes = static_cast<size_t>(channels) * sizeof(float);
  // The host layer's statistics are the truth (a checkpoint may have restored them).
  DTB_CUDA(cudaMemcpyAsync(running_mean, running_mean_->data(), channel_bytes, cudaMemcpyDefault, context_.stream()));
  DTB_CUDA(cudaMemcpyAsync(running_var, running_var_->data(), channel_bytes, cudaMemcpyDefault, context_.stream()));
  input_ = context_.readable(input, input_staging_);
  output_ = output_buffer_.as(input_shape_);
  const float one = 1.0f, zero = 0.0f;
  const double epsilon = epsilon_;
  if (mode == Mode::Eval) {
    DTB_CUDA(cudnnBatchNormalizationForwardInference(context_.cudnn(), kMode, &one, &zero, desc_.get(), input_,
                                                     desc_.get(), output_.data(), channel_desc_.get(),
                                                     value(0), value(1), running_mean, running_var,
                                                     epsilon));
  } else {
    DTB_CUDA(cudnnBatchNormalizationForwardTraining(context_.cudnn(), kMode, &one, &zero, desc_.get(), input_,
                                                    desc_.get(), output_.data(), channel_desc_.get(), value(0),
                                                    value(1), momentum_, running_mean, running_var, epsilon,
                                                    saved_mean, saved_inv_std));
    DTB_CUDA(cudaMemcpyAsync(running_mean_->data(), running_mean, channel_bytes, cudaMemcpyDefault, context_.stream()));
    DTB_CUDA(cudaMemcpyAsync(running_var_->data(), running_var, channel_bytes, cudaMemcpyDefault, context_.stream()));
  }
  context_.end_operation();
  return output_;
}

Tensor& BatchNormTwin::backward(Tensor& grad_output) {
  DTB_CHECK(input_ != nullptr && grad_output.shape() == input_shape_, "batchnorm2d: gradient {} for input {}",
            shape_string(grad_output.shape()), shape_string(input_shape_));
  const int64_t channels = input_shape_[1];
  const float* saved_mean = statistics_.data() + 2 * channels;
  const float* saved_inv_std = saved_mean + channels;
  const float* dy = context_.readable(grad_output, grad_staging_);
  grad_input_ = grad_input_buffer_.as(input_shape_);
  const float one = 1.0f, zero = 0.0f;
  // Input gradient and the parameters' gradients written (not accumulated): the zeros are betas.
  DTB_CUDA(cudnnBatchNormalizationBackward(context_.cudnn(), kMode, &one, &zero, &one, &zero, desc_.get(), input_,
                                           desc_.get(), dy, desc_.get(), grad_input_.data(), channel_desc_.get(),
                                           value(0), grad(0), grad(1), epsilon_, saved_mean,
                                           saved_inv_std));
  context_.end_operation();
  return grad_input_;
}

}  // namespace dtbench::cuda
