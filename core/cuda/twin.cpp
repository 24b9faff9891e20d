#include "core/cuda/twin.h"

#include "core/util/error.h"

namespace dtbench::cuda {

Twin::Twin(CudaContext& context, std::unique_ptr<Layer> host) : context_(context), host_(std::move(host)) {
  set_needs_input_grad(host_->needs_input_grad());
  host_->collect_params(params_);
}

float* Twin::value(size_t index) const {
  const Param& param = *params_.at(index);
  return context_.on_device(param.value, param.numel());
}

float* Twin::grad(size_t index) const {
  const Param& param = *params_.at(index);
  return context_.on_device(param.grad, param.numel());
}

TensorDesc::TensorDesc() { DTB_CUDA(cudnnCreateTensorDescriptor(&descriptor_)); }
TensorDesc::~TensorDesc() { cudnnDestroyTensorDescriptor(descriptor_); }

void TensorDesc::set(const Shape& shape) {
  DTB_CHECK(!shape.empty(), "a cuDNN tensor needs a batch dimension");
  if (shape.size() == 4) return set(shape[0], shape[1], shape[2], shape[3]);
  const int64_t batch = shape[0];
  set(batch, batch > 0 ? element_count(shape) / batch : 0, 1, 1);
}

void TensorDesc::set(int64_t n, int64_t c, int64_t h, int64_t w) {
  DTB_CUDA(cudnnSetTensor4dDescriptor(descriptor_, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, static_cast<int>(n),
                                      static_cast<int>(c), static_cast<int>(h), static_cast<int>(w)));
}

}  // namespace dtbench::cuda
