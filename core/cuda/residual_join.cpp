#include "core/cuda/residual_join.h"

#include "core/cuda/kernels.h"
#include "core/util/error.h"

namespace dtbench::cuda {

namespace {

class DeviceResidualJoin final : public ResidualJoin {
 public:
  explicit DeviceResidualJoin(CudaContext& context) : context_(context) {}

  const Tensor& forward(const Tensor& main, const Tensor& shortcut) override {
    DTB_CHECK(main.shape() == shortcut.shape(), "residual join: main {} and shortcut {}", shape_string(main.shape()),
              shape_string(shortcut.shape()));
    const float* a = context_.readable(main, main_staging_);
    const float* b = context_.readable(shortcut, shortcut_staging_);
    output_ = output_buffer_.as(main.shape());
    launch_add_relu(output_.data(), a, b, output_.numel(), context_.stream());
    context_.end_operation();
    return output_;
  }

  Tensor& backward(Tensor& grad_output) override {
    DTB_CHECK(grad_output.shape() == output_.shape(), "residual join: gradient {} for output {}",
              shape_string(grad_output.shape()), shape_string(output_.shape()));
    require_on_device(grad_output, "the block's output gradient");
    shortcut_grad_ = shortcut_grad_buffer_.as(grad_output.shape());
    launch_relu_grad_copy(grad_output.data(), shortcut_grad_.data(), output_.data(), grad_output.numel(),
                          context_.stream());
    context_.end_operation();
    return shortcut_grad_;
  }

  void accumulate(Tensor& sum, const Tensor& other) override {
    DTB_CHECK(sum.numel() == other.numel(), "residual join: adding {} to {}", shape_string(other.shape()),
              shape_string(sum.shape()));
    require_on_device(sum, "the main branch's input gradient");
    launch_accumulate(sum.data(), context_.readable(other, other_staging_), sum.numel(), context_.stream());
    context_.end_operation();
  }

 private:
  // What the join writes in place must be the device's: a twin made it.
  void require_on_device(const Tensor& tensor, const char* what) const {
    DTB_CHECK(tensor.empty() || context_.device_accessible(tensor.data()),
              "residual join on the device: {} is host memory (a layer without a device twin made it)", what);
  }

  CudaContext& context_;
  DeviceBuffer main_staging_, shortcut_staging_, other_staging_, output_buffer_, shortcut_grad_buffer_;
  Tensor output_, shortcut_grad_;
};

}  // namespace

std::unique_ptr<ResidualJoin> make_device_residual_join(CudaContext& context) {
  return std::make_unique<DeviceResidualJoin>(context);
}

}  // namespace dtbench::cuda
