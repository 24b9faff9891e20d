#include "core/layers/batchnorm.h"

#include <cmath>

#include "core/kernels/batchnorm.h"
#include "core/util/error.h"

namespace dtbench {

BatchNorm2d::BatchNorm2d(int64_t channels, float momentum, float epsilon)
    : channels_(channels),
      momentum_(momentum),
      epsilon_(epsilon),
      running_mean_(Shape{channels}),
      running_var_(Shape{channels}) {
  if (channels <= 0) fail_input("batchnorm2d: channels must be positive, got {}", channels);
  if (!(momentum >= 0.0f && momentum <= 1.0f)) {
    fail_input("batchnorm2d: momentum must be in [0, 1], got {}", momentum);
  }
  if (!(epsilon > 0.0f)) fail_input("batchnorm2d: epsilon must be positive, got {}", epsilon);
  gamma_ = Param{.name = "weight", .shape = {channels}, .init = Init::Ones};
  beta_ = Param{.name = "bias", .shape = {channels}, .init = Init::Zeros};
  running_var_.fill(1.0f);
}

Shape BatchNorm2d::configure(const Shape& sample_input) {
  if (sample_input.size() != 3 || sample_input[0] != channels_) {
    fail_input("batchnorm2d: expects a (C, H, W) sample with C = {}, i.e. ({}, H, W), but got {}",
               channels_, channels_, shape_string(sample_input));
  }
  plane_ = sample_input[1] * sample_input[2];
  return sample_input;
}

const Tensor& BatchNorm2d::forward(const Tensor& input, Mode mode) {
  DTB_CHECK(input.rank() == 4 && input.dim(1) == channels_, "batchnorm2d({}) got input {}",
            channels_, shape_string(input.shape()));
  DTB_CHECK(gamma_.value != nullptr, "batchnorm2d used before its parameters were bound");
  const int64_t batch = input.dim(0);
  const int64_t plane = input.dim(2) * input.dim(3);
  output_.resize(input.shape());
  batch_mean_.resize({channels_});
  batch_inv_std_.resize({channels_});
  float* mean = batch_mean_.data();
  float* inv_std = batch_inv_std_.data();
  float* running_mean = running_mean_.data();
  float* running_var = running_var_.data();

  if (mode == Mode::Train) {
    const int64_t count = batch * plane;
    if (count < 2) {
      fail_input("batchnorm2d: training needs more than one value per channel, got input {}",
                 shape_string(input.shape()));
    }
    batch_var_.resize({channels_});
    const float* var = batch_var_.data();
    kernels::batchnorm_forward_train(output_.data(), mean, batch_var_.data(), inv_std, input.data(),
                                     gamma_.value, beta_.value, epsilon_, batch, channels_, plane);
    // PyTorch's update: the running variance tracks the unbiased estimate N / (N − 1) · var.
    const double unbias = double(count) / double(count - 1);
    for (int64_t c = 0; c < channels_; ++c) {
      running_mean[c] = (1.0f - momentum_) * running_mean[c] + momentum_ * mean[c];
      running_var[c] =
          static_cast<float>((1.0 - momentum_) * running_var[c] + momentum_ * (var[c] * unbias));
    }
  } else {
    for (int64_t c = 0; c < channels_; ++c) {
      mean[c] = running_mean[c];
      inv_std[c] = static_cast<float>(1.0 / std::sqrt(double(running_var[c]) + epsilon_));
    }
    kernels::batchnorm_normalize(output_.data(), input.data(), mean, inv_std, gamma_.value,
                                 beta_.value, batch, channels_, plane);
  }
  input_ = &input;
  last_mode_ = mode;
  return output_;
}

Tensor& BatchNorm2d::backward(Tensor& grad_output) {
  DTB_CHECK(input_ != nullptr && grad_output.shape() == input_->shape(),
            "batchnorm2d backward: gradient {} does not match the last forward",
            shape_string(grad_output.shape()));
  const int64_t batch = input_->dim(0);
  const int64_t plane = input_->dim(2) * input_->dim(3);
  // In place: each input-gradient element depends on its own output-gradient element and on
  // per-channel sums taken over grad_output before any element is written.
  float* grad_input = needs_input_grad_ ? grad_output.data() : nullptr;
  kernels::batchnorm_backward(grad_input, gamma_.grad, beta_.grad, grad_output.data(),
                              input_->data(), batch_mean_.data(), batch_inv_std_.data(),
                              gamma_.value, last_mode_ == Mode::Train, batch, channels_, plane);
  return needs_input_grad_ ? grad_output : no_grad_;
}

void BatchNorm2d::collect_params(std::vector<Param*>& out) {
  out.push_back(&gamma_);
  out.push_back(&beta_);
}

void BatchNorm2d::collect_buffers(std::vector<Tensor*>& out) {
  out.push_back(&running_mean_);
  out.push_back(&running_var_);
}

// One multiply-add per value once the statistics are folded into a per-channel scale and shift.
int64_t BatchNorm2d::macs_per_sample() const { return channels_ * plane_; }

}  // namespace dtbench
