#pragma once
#include <map>

#include "core/layers/layer.h"
#include "core/tuning/conv_tuning.h"

namespace dtbench {

// 2-D convolution, NCHW. Input (B, Cin, H, W), output (B, Cout, Ho, Wo) with
// Ho = (H + 2·padding − kernel) / stride + 1. weight (Cout, Cin, k, k), bias (Cout) when enabled.
// Computed by one of core/kernels/conv_algorithms.h's algorithms (im2col + sgemm, Winograd, lanes,
// direct loops), forward and backward each: the fastest measured for the batch size once
// autotune(batch) ran (core/tuning/conv_tuning.h), the fixed rules' choice before. Each
// algorithm's scratch is shared by all convolutions on a thread.
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
  // Measures (or reads from the machine's tuning cache) the algorithms for batches of `batch`.
  void autotune(int64_t batch) override;
  // What autotune chose, by batch size (empty before it ran).
  const std::map<int64_t, ConvTuning>& tunings() const { return tunings_; }
  // This layer's sizes for a batch (the shape its algorithms are chosen for).
  ConvSizes sizes(int64_t batch) const;
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
  int64_t in_channels_, out_channels_, kernel_, stride_, padding_;
  bool has_bias_;
  int64_t height_ = 0, width_ = 0, out_height_ = 0, out_width_ = 0;
  Param weight_, bias_;
  const Tensor* input_ = nullptr;
  Tensor output_, grad_input_;
  std::map<int64_t, ConvTuning> tunings_;
};

}  // namespace dtbench
