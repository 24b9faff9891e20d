#include <stdexcept>

#include "core/cuda/twins.h"
#include "core/layers/conv2d.h"
#include "core/util/error.h"

namespace dtbench::cuda {

namespace {

using cuda_plan::ConvChoice;
using cuda_plan::ConvDirection;

// The fastest algorithm that succeeded within the workspace limit; cuDNN lists them fastest first.
template <typename Perf>
ConvChoice first_usable(const Perf* results, int count, int64_t limit, const char* direction) {
  for (int i = 0; i < count; ++i) {
    if (results[i].status == CUDNN_STATUS_SUCCESS && static_cast<int64_t>(results[i].memory) <= limit) {
      return {static_cast<int>(results[i].algo), static_cast<int64_t>(results[i].memory)};
    }
  }
  throw std::runtime_error(fmt::format("cuDNN found no usable {} convolution algorithm within {} bytes of workspace",
                                       direction, limit));
}

}  // namespace

ConvTwin::ConvTwin(CudaContext& context, std::unique_ptr<Layer> host) : Twin(context, std::move(host)) {
  const auto& conv = dynamic_cast<const Conv2d&>(*host_);
  in_channels_ = conv.in_channels();
  out_channels_ = conv.out_channels();
  kernel_ = conv.kernel();
  stride_ = conv.stride();
  padding_ = conv.padding();
  has_bias_ = conv.has_bias();
  const int k = static_cast<int>(kernel_), p = static_cast<int>(padding_), s = static_cast<int>(stride_);
  DTB_CUDA(cudnnCreateFilterDescriptor(&filter_));
  DTB_CUDA(cudnnSetFilter4dDescriptor(filter_, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, static_cast<int>(out_channels_),
                                      static_cast<int>(in_channels_), k, k));
  DTB_CUDA(cudnnCreateConvolutionDescriptor(&convolution_));
  DTB_CUDA(cudnnSetConvolution2dDescriptor(convolution_, p, p, s, s, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  // precision fp32: FMA arithmetic throughout (no TF32 tensor cores), so results stay comparable
  // with the CPU's; tf32: cuDNN's default, which lets an Ampere or later GPU's tensor cores in.
  DTB_CUDA(cudnnSetConvolutionMathType(convolution_, context_.conv_math()));
  bias_desc_.set(1, out_channels_, 1, 1);
}

ConvTwin::~ConvTwin() {
  cudnnDestroyConvolutionDescriptor(convolution_);
  cudnnDestroyFilterDescriptor(filter_);
}

void ConvTwin::autotune(int64_t batch) {
  Shape input_shape = dynamic_cast<const Conv2d&>(*host_).sample_input();
  input_shape.insert(input_shape.begin(), batch);
  describe(input_shape);
  choose(ConvDirection::Forward);
  choose(ConvDirection::BackwardFilter);
  if (needs_input_grad_) choose(ConvDirection::BackwardData);
}

ConvChoice ConvTwin::choose(ConvDirection direction) {
  const cuda_plan::ConvShape shape{input_shape_[0], in_channels_, input_shape_[2], input_shape_[3],
                                   out_channels_,   kernel_,      stride_,         padding_};
  const int64_t limit = context_.search_workspace_limit();
  return context_.conv_algorithms().choose(direction, shape, [&] {
    switch (direction) {
      case ConvDirection::Forward: {
        cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int count = 0;
        DTB_CUDA(cudnnFindConvolutionForwardAlgorithm(context_.cudnn(), input_desc_.get(), filter_, convolution_,
                                                      output_desc_.get(), CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count,
                                                      results));
        return first_usable(results, count, limit, "forward");
      }
      case ConvDirection::BackwardFilter: {
        cudnnConvolutionBwdFilterAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        int count = 0;
        DTB_CUDA(cudnnFindConvolutionBackwardFilterAlgorithm(context_.cudnn(), input_desc_.get(), output_desc_.get(),
                                                             convolution_, filter_,
                                                             CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, results));
        return first_usable(results, count, limit, "filter-gradient");
      }
      case ConvDirection::BackwardData: {
        cudnnConvolutionBwdDataAlgoPerf_t results[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        int count = 0;
        DTB_CUDA(cudnnFindConvolutionBackwardDataAlgorithm(context_.cudnn(), filter_, output_desc_.get(), convolution_,
                                                           input_desc_.get(), CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                           &count, results));
        return first_usable(results, count, limit, "data-gradient");
      }
    }
    throw std::logic_error("conv2d: unknown direction");
  });
}

void ConvTwin::describe(const Shape& input_shape) {
  if (input_shape == input_shape_) return;
  DTB_CHECK(input_shape.size() == 4 && input_shape[1] == in_channels_, "conv2d ({} channels) given input {}",
            in_channels_, shape_string(input_shape));
  input_shape_ = input_shape;
  input_desc_.set(input_shape);
  int n = 0, c = 0, h = 0, w = 0;
  DTB_CUDA(cudnnGetConvolution2dForwardOutputDim(convolution_, input_desc_.get(), filter_, &n, &c, &h, &w));
  output_shape_ = {n, c, h, w};
  output_desc_.set(output_shape_);
}

const Tensor& ConvTwin::forward(const Tensor& input, Mode mode) {
  (void)mode;
  describe(input.shape());
  input_ = context_.readable(input, input_staging_);
  output_ = output_buffer_.as(output_shape_);
  const ConvChoice choice = choose(ConvDirection::Forward);
  void* workspace = context_.workspace(choice.workspace_bytes);
  const float one = 1.0f, zero = 0.0f;
  DTB_CUDA(cudnnConvolutionForward(context_.cudnn(), &one, input_desc_.get(), input_, filter_, value(0),
                                   convolution_, static_cast<cudnnConvolutionFwdAlgo_t>(choice.algorithm), workspace,
                                   static_cast<size_t>(choice.workspace_bytes), &zero, output_desc_.get(),
                                   output_.data()));
  if (has_bias_) {
    DTB_CUDA(cudnnAddTensor(context_.cudnn(), &one, bias_desc_.get(), value(1), &one, output_desc_.get(),
                            output_.data()));
  }
  context_.end_operation();
  return output_;
}

Tensor& ConvTwin::backward(Tensor& grad_output) {
  DTB_CHECK(input_ != nullptr && grad_output.numel() == element_count(output_shape_),
            "conv2d: gradient {} for output {}", shape_string(grad_output.shape()), shape_string(output_shape_));
  const float* dy = context_.readable(grad_output, grad_staging_);
  const float one = 1.0f, zero = 0.0f;
  const ConvChoice filter_choice = choose(ConvDirection::BackwardFilter);
  void* workspace = context_.workspace(filter_choice.workspace_bytes);
  DTB_CUDA(cudnnConvolutionBackwardFilter(context_.cudnn(), &one, input_desc_.get(), input_, output_desc_.get(), dy,
                                          convolution_,
                                          static_cast<cudnnConvolutionBwdFilterAlgo_t>(filter_choice.algorithm),
                                          workspace, static_cast<size_t>(filter_choice.workspace_bytes), &zero,
                                          filter_, grad(0)));
  if (has_bias_) {
    DTB_CUDA(cudnnConvolutionBackwardBias(context_.cudnn(), &one, output_desc_.get(), dy, &zero, bias_desc_.get(),
                                          grad(1)));
  }
  grad_input_ = Tensor();
  if (needs_input_grad_) {
    const ConvChoice data_choice = choose(ConvDirection::BackwardData);
    grad_input_ = grad_input_buffer_.as(input_shape_);
    workspace = context_.workspace(data_choice.workspace_bytes);
    DTB_CUDA(cudnnConvolutionBackwardData(context_.cudnn(), &one, filter_, value(0), output_desc_.get(), dy,
                                          convolution_, static_cast<cudnnConvolutionBwdDataAlgo_t>(data_choice.algorithm),
                                          workspace, static_cast<size_t>(data_choice.workspace_bytes), &zero,
                                          input_desc_.get(), grad_input_.data()));
  }
  context_.end_operation();
  return grad_input_;
}

}  // namespace dtbench::cuda
