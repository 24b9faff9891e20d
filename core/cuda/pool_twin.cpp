#include "core/cuda/twins.h"
#include "core/util/error.h"

namespace dtbench::cuda {

PoolTwin::PoolTwin(CudaContext& context, std::unique_ptr<Layer> host, Kind kind, int64_t window, int64_t stride)
    : Twin(context, std::move(host)), kind_(kind), window_(window), stride_(stride) {
  DTB_CUDA(cudnnCreatePoolingDescriptor(&pooling_));
}

PoolTwin::~PoolTwin() { cudnnDestroyPoolingDescriptor(pooling_); }

const Tensor& PoolTwin::forward(const Tensor& input, Mode mode) {
  (void)mode;
  DTB_CHECK(input.rank() == 4, "{} given input {}", kind(), shape_string(input.shape()));
  if (input.shape() != input_shape_) {
    input_shape_ = input.shape();
    const int64_t batch = input.dim(0), channels = input.dim(1), height = input.dim(2), width = input.dim(3);
    // The global average is a window over the whole plane; the CPU max pool keeps the first
    // maximum of a window, which cuDNN's deterministic max mode does too.
    const bool global = kind_ == Kind::GlobalAverage;
    const int window_h = static_cast<int>(global ? height : window_), window_w = static_cast<int>(global ? width : window_);
    const int stride_h = global ? window_h : static_cast<int>(stride_), stride_w = global ? window_w : static_cast<int>(stride_);
    const cudnnPoolingMode_t mode_of_kind =
        kind_ == Kind::Max ? CUDNN_POOLING_MAX_DETERMINISTIC : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    DTB_CUDA(cudnnSetPooling2dDescriptor(pooling_, mode_of_kind, CUDNN_NOT_PROPAGATE_NAN, window_h, window_w, 0, 0,
                                         stride_h, stride_w));
    input_desc_.set(input_shape_);
    output_desc_.set(batch, channels, (height - window_h) / stride_h + 1, (width - window_w) / stride_w + 1);
  }
  input_ = context_.readable(input, input_staging_);
  int n = 0, c = 0, h = 0, w = 0;
  DTB_CUDA(cudnnGetPooling2dForwardOutputDim(pooling_, input_desc_.get(), &n, &c, &h, &w));
  // (B, C) for the global average, as the CPU layer gives it.
  output_ = kind_ == Kind::GlobalAverage ? output_buffer_.as({n, c}) : output_buffer_.as({n, c, h, w});
  const float one = 1.0f, zero = 0.0f;
  DTB_CUDA(cudnnPoolingForward(context_.cudnn(), pooling_, &one, input_desc_.get(), input_, &zero, output_desc_.get(),
                               output_.data()));
  context_.end_operation();
  return output_;
}

Tensor& PoolTwin::backward(Tensor& grad_output) {
  DTB_CHECK(input_ != nullptr && grad_output.numel() == output_.numel(), "{}: gradient {} for output {}", kind(),
            shape_string(grad_output.shape()), shape_string(output_.shape()));
  const float* dy = context_.readable(grad_output, grad_staging_);
  grad_input_ = grad_input_buffer_.as(input_shape_);
  const float one = 1.0f, zero = 0.0f;
  DTB_CUDA(cudnnPoolingBackward(context_.cudnn(), pooling_, &one, output_desc_.get(), output_.data(),
                                output_desc_.get(), dy, input_desc_.get(), input_, &zero, input_desc_.get(),
                                grad_input_.data()));
  context_.end_operation();
  return grad_input_;
}

}  // namespace dtbench::cuda
