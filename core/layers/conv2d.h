#pragma once
#include "core/layers/layer.h"

namespace dtbench {

struct ConvSizes;  // core/kernels/im2col.h

// 2-D convolution, NCHW. Input (B, Cin, H, W), output (B, Cout, Ho, Wo) with
// Ho = (H + 2·padding − kernel) / stride + 1. weight (Cout, Cin, k, k), bias (Cout) when enabled.
// 3x3 stride-1 convolutions with 16 or more input channels run by Winograd's F(2x2, 3x3)
// (core/kernels/conv_winograd.h), stride-1 ones with few channels by direct loops
// (core/kernels/conv_direct.h), all others by im2col + sgemm (core/kernels/conv_gemm.h: forward
// one sgemm, backward sgemm for the weight gradient and sgemm + col2im for the input gradient).
// Each path's scratch is shared by all convolutions on a thread.
class Conv2d : public Layer {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride = 1,
         int64_t padding = 0, bool bias = true, Init weight_init = Init::KaimingNormal);
  std::string kind() const override { return "conv2d"; }
  Shape configure(const Shape& sample_input) override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  void collect_params(std::vector<Param*>& out) override;
  int64_t macs_per_sample() const override;
  // The configuration, for a device twin (core/device/device.h).
  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  int64_t kernel() const { return kernel_; }
  int64_t stride() const { return stride_; }
  int64_t padding() const { return padding_; }
  bool has_bias() const { return has_bias_; }
  // One sample's input (Cin, H, W), as configured.
  Shape sample_input() const { return {in_channels_, height_, width_}; }

 private:
  ConvSizes sizes(int64_t batch) const;

  int64_t in_channels_, out_channels_, kernel_, stride_, padding_;
  bool has_bias_;
  int64_t height_ = 0, width_ = 0, out_height_ = 0, out_width_ = 0;
  Param weight_, bias_;
  const Tensor* input_ = nullptr;
  Tensor output_, grad_input_;
};

}  // namespace dtbench
