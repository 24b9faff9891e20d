#include "core/layers/pooling.h"

#include <cstdint>

#include "core/kernels/pool_2d.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

struct PoolPlan {
  int64_t channels, height, width, out_height, out_width;
};

// Checks a pooling window against one sample (C, H, W) and works out the output plane.
PoolPlan plan_pool(const char* kind, const Shape& sample_input, int64_t kernel, int64_t stride) {
  if (sample_input.size() != 3) {
    fail_input("{}: expects a sample of shape (C, H, W), got {}", kind, shape_string(sample_input));
  }
  const int64_t height = sample_input[1], width = sample_input[2];
  if (height < kernel || width < kernel) {
    fail_input("{}: a {}x{} window does not fit input {} (empty output)", kind, kernel, kernel,
               shape_string(sample_input));
  }
  return {sample_input[0], height, width, (height - kernel) / stride + 1,
          (width - kernel) / stride + 1};
}

void check_window(const char* kind, int64_t kernel, int64_t stride) {
  if (kernel < 1 || stride < 1) {
    fail_input("{}: kernel and stride must be positive, got kernel {} stride {}", kind, kernel,
               stride);
  }
}

void check_input(const char* kind, const Tensor& input, int64_t channels, int64_t height,
                 int64_t width) {
  DTB_CHECK(input.rank() == 4 && input.dim(1) == channels && input.dim(2) == height &&
                input.dim(3) == width,
            "{} configured for ({}, {}, {}) given input {}", kind, channels, height, width,
            shape_string(input.shape()));
}

}  // namespace

MaxPool2d::MaxPool2d(int64_t kernel, int64_t stride) : kernel_(kernel), stride_(stride) {
  check_window("maxpool2d", kernel, stride);
}

Shape MaxPool2d::configure(const Shape& sample_input) {
  const PoolPlan plan = plan_pool("maxpool2d", sample_input, kernel_, stride_);
  if (plan.height * plan.width > INT32_MAX) {
    fail_input("maxpool2d: input plane {} too large", shape_string(sample_input));
  }
  channels_ = plan.channels;
  height_ = plan.height;
  width_ = plan.width;
  out_height_ = plan.out_height;
  out_width_ = plan.out_width;
  return {channels_, out_height_, out_width_};
}

const Tensor& MaxPool2d::forward(const Tensor& input, Mode mode) {
  (void)mode;
  check_input("maxpool2d", input, channels_, height_, width_);
  const int64_t batch = input.dim(0);
  output_.resize({batch, channels_, out_height_, out_width_});
  argmax_.resize(static_cast<size_t>(output_.numel()));
  maxpool2d_forward(output_.data(), argmax_.data(), input.data(), batch * channels_, height_,
                    width_, kernel_, stride_, out_height_, out_width_);
  return output_;
}

Tensor& MaxPool2d::backward(Tensor& grad_output) {
  DTB_CHECK(grad_output.shape() == output_.shape(), "maxpool2d: output gradient {} for output {}",
            shape_string(grad_output.shape()), shape_string(output_.shape()));
  if (!needs_input_grad_) return grad_input_;
  const int64_t batch = output_.dim(0);
  grad_input_.resize({batch, channels_, height_, width_});
  maxpool2d_backward(grad_input_.data(), grad_output.data(), argmax_.data(), batch * channels_,
                     height_, width_, kernel_, stride_, out_height_, out_width_);
  return grad_input_;
}

AvgPool2d::AvgPool2d(int64_t kernel, int64_t stride) : kernel_(kernel), stride_(stride) {
  check_window("avgpool2d", kernel, stride);
}

Shape AvgPool2d::configure(const Shape& sample_input) {
  const PoolPlan plan = plan_pool("avgpool2d", sample_input, kernel_, stride_);
  channels_ = plan.channels;
  height_ = plan.height;
  width_ = plan.width;
  out_height_ = plan.out_height;
  out_width_ = plan.out_width;
  return {channels_, out_height_, out_width_};
}

const Tensor& AvgPool2d::forward(const Tensor& input, Mode mode) {
  (void)mode;
  check_input("avgpool2d", input, channels_, height_, width_);
  const int64_t batch = input.dim(0);
  output_.resize({batch, channels_, out_height_, out_width_});
  avgpool2d_forward(output_.data(), input.data(), batch * channels_, height_, width_, kernel_,
                    stride_, out_height_, out_width_);
  return output_;
}

Tensor& AvgPool2d::backward(Tensor& grad_output) {
  DTB_CHECK(grad_output.shape() == output_.shape(), "avgpool2d: output gradient {} for output {}",
            shape_string(grad_output.shape()), shape_string(output_.shape()));
  if (!needs_input_grad_) return grad_input_;
  const int64_t batch = output_.dim(0);
  grad_input_.resize({batch, channels_, height_, width_});
  avgpool2d_backward(grad_input_.data(), grad_output.data(), batch * channels_, height_, width_,
                     kernel_, stride_, out_height_, out_width_);
  return grad_input_;
}

Shape GlobalAvgPool::configure(const Shape& sample_input) {
  if (sample_input.size() != 3 || element_count(sample_input) < 1) {
    fail_input("global average pool: expects a non-empty sample of shape (C, H, W), got {}",
               shape_string(sample_input));
  }
  channels_ = sample_input[0];
  height_ = sample_input[1];
  width_ = sample_input[2];
  return {channels_};
}

const Tensor& GlobalAvgPool::forward(const Tensor& input, Mode mode) {
  (void)mode;
  check_input("global average pool", input, channels_, height_, width_);
  const int64_t batch = input.dim(0);
  output_.resize({batch, channels_});
  global_avgpool_forward(output_.data(), input.data(), batch * channels_, height_ * width_);
  return output_;
}

Tensor& GlobalAvgPool::backward(Tensor& grad_output) {
  DTB_CHECK(grad_output.shape() == output_.shape(),
            "global average pool: output gradient {} for output {}",
            shape_string(grad_output.shape()), shape_string(output_.shape()));
  if (!needs_input_grad_) return grad_input_;
  const int64_t batch = output_.dim(0);
  grad_input_.resize({batch, channels_, height_, width_});
  global_avgpool_backward(grad_input_.data(), grad_output.data(), batch * channels_,
                          height_ * width_);
  return grad_input_;
}

}  // namespace dtbench
