#pragma once
// The device twins of core/layers' leaf layers (see twin.h). Libraries first: cuBLAS for linear
// layers and their bias reductions, cuDNN for convolution, pooling, batch norm and activations;
// our own kernels (kernels.h) only for dropout's mask.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/cuda/twin.h"

namespace dtbench::cuda {

// Linear: Y = X Wᵀ + b as one sgemm and a rank-1 update; dW, dX sgemm, db an sgemv with ones.
class LinearTwin : public Twin {
 public:
  LinearTwin(CudaContext& context, std::unique_ptr<Layer> host);
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;

 private:
  int64_t in_, out_;
  const float* input_ = nullptr;
  Shape input_shape_;
  DeviceBuffer input_staging_, grad_staging_, output_buffer_, grad_input_buffer_;
  Tensor output_, grad_input_;
};

// Convolution (cuDNN, algorithms searched once per shape), bias by cudnnAddTensor.
class ConvTwin : public Twin {
 public:
  ConvTwin(CudaContext& context, std::unique_ptr<Layer> host);
  ~ConvTwin() override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  // The three algorithm searches for this batch size, ahead of its first pass.
  void autotune(int64_t batch) override;

 private:
  void describe(const Shape& input_shape);
  // The algorithm for the described shape: the cached choice, or cuDNN's search (run only then).
  cuda_plan::ConvChoice choose(cuda_plan::ConvDirection direction);

  int64_t in_channels_, out_channels_, kernel_, stride_, padding_;
  bool has_bias_;
  cudnnFilterDescriptor_t filter_ = nullptr;
  cudnnConvolutionDescriptor_t convolution_ = nullptr;
  TensorDesc input_desc_, output_desc_, bias_desc_;
  Shape input_shape_, output_shape_;
  const float* input_ = nullptr;
  DeviceBuffer input_staging_, grad_staging_, output_buffer_, grad_input_buffer_;
  Tensor output_, grad_input_;
};

// Max, average and global average pooling (cuDNN).
class PoolTwin : public Twin {
 public:
  enum class Kind { Max, Average, GlobalAverage };
  PoolTwin(CudaContext& context, std::unique_ptr<Layer> host, Kind kind, int64_t window, int64_t stride);
  ~PoolTwin() override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;

 private:
  Kind kind_;
  int64_t window_, stride_;
  cudnnPoolingDescriptor_t pooling_ = nullptr;
  TensorDesc input_desc_, output_desc_;
  Shape input_shape_;
  const float* input_ = nullptr;
  DeviceBuffer input_staging_, grad_staging_, output_buffer_, grad_input_buffer_;
  Tensor output_, grad_input_;
};

// ReLU, tanh and sigmoid (cuDNN); never in place on the device.
class ActivationTwin : public Twin {
 public:
  ActivationTwin(CudaContext& context, std::unique_ptr<Layer> host, cudnnActivationMode_t mode);
  ~ActivationTwin() override;
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;

 private:
  cudnnActivationDescriptor_t activation_ = nullptr;
  TensorDesc desc_;
  const float* input_ = nullptr;
  DeviceBuffer input_staging_, grad_staging_, output_buffer_, grad_input_buffer_;
  Tensor output_, grad_input_;
};

// Batch norm (cuDNN, spatial). The running statistics stay the host layer's tensors (they are
// what checkpoints and reports read); they are copied to the device before a forward and back
// after a training one.
class BatchNormTwin : public Twin {
 public:
  BatchNormTwin(CudaContext& context, std::unique_ptr<Layer> host);
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;

 private:
  float momentum_, epsilon_;
  Tensor* running_mean_ = nullptr;  // the host layer's
  Tensor* running_var_ = nullptr;
  TensorDesc desc_, channel_desc_;
  Shape input_shape_;
  const float* input_ = nullptr;
  DeviceBuffer statistics_;  // running mean, running var, saved mean, saved inverse std: (4, C)
  DeviceBuffer input_staging_, grad_staging_, output_buffer_, grad_input_buffer_;
  Tensor output_, grad_input_;
};

// Inverted dropout: the mask is drawn on the device by the CPU layer's counter-based generator
// (bodies/dropout.h: Philox keyed by the layer's seed, the pass number and the element), so both
// devices drop the same units from the same seed and nothing is copied from the host.
class DropoutTwin : public Twin {
 public:
  DropoutTwin(CudaContext& context, std::unique_ptr<Layer> host);
  const Tensor& forward(const Tensor& input, Mode mode) override;
  Tensor& backward(Tensor& grad_output) override;
  void reseed(uint64_t seed) override;

 private:
  float probability_;
  uint64_t seed_ = 0;
  uint64_t calls_ = 0;
  Mode last_mode_ = Mode::Eval;
  DeviceBuffer input_staging_, grad_staging_, mask_buffer_, output_buffer_, grad_input_buffer_;
  Tensor output_, grad_input_, mask_;
};

}  // namespace dtbench::cuda
