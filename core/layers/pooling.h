#pragma once
#include "core/layers/layer.h"

namespace dtbench {

// Max pooling, NCHW, no padding; output (B, C, (H−k)/s+1, (W−k)/s+1). Forward keeps the argmax of
// each window for backward.
class MaxPool2d : public Layer {
 public:
  MaxPool2d(int64_t kernel, int64_t stride);
  std::string kind() const override { return "maxpool2d"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  int64_t kernel() const { return kernel_; }  // for a device twin
  int64_t stride() const { return stride_; }

 private:
  int64_t kernel_, stride_;
  int64_t channels_ = 0, height_ = 0, width_ = 0, out_height_ = 0, out_width_ = 0;
  Tensor output_, grad_input_;
  std::vector<int32_t> argmax_;  // per output element, index into its input plane
};

// Average pooling, NCHW, no padding.
class AvgPool2d : public Layer {
 public:
  AvgPool2d(int64_t kernel, int64_t stride);
  std::string kind() const override { return "avgpool2d"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  int64_t kernel() const { return kernel_; }  // for a device twin
  int64_t stride() const { return stride_; }

 private:
  int64_t kernel_, stride_;
  int64_t channels_ = 0, height_ = 0, width_ = 0, out_height_ = 0, out_width_ = 0;
  Tensor output_, grad_input_;
};

// Mean over each channel's plane: (B, C, H, W) -> (B, C).
class GlobalAvgPool : public Layer {
 public:
  std::string kind() const override { return "avgpool2d"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;

 private:
  int64_t channels_ = 0, height_ = 0, width_ = 0;
  Tensor output_, grad_input_;
};

}  // namespace dtbench
