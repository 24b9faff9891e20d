#include "core/layers/conv2d.h"

#include "core/kernels/conv_algorithms.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

// The algorithms of a batch size: the measured ones once autotune ran for it, else the rules'.
ConvFunctions functions_for(const std::map<int64_t, ConvTuning>& tunings, const ConvSizes& sizes, bool forward) {
  const auto tuned = tunings.find(sizes.batch);
  const ConvAlgorithm algorithm =
      tuned == tunings.end() ? rule_choice(sizes) : forward ? tuned->second.forward : tuned->second.backward;
  return conv_functions(algorithm);
}

}  // namespace

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride,
               int64_t padding, bool bias, Init weight_init)
    : in_channels_(in_channels),
      out_channels_(out_channels),
      kernel_(kernel),
      stride_(stride),
      padding_(padding),
      has_bias_(bias),
      weight_{.name = "weight",
              .shape = {out_channels, in_channels, kernel, kernel},
              .init = weight_init,
              .fan_in = in_channels * kernel * kernel,
              .fan_out = out_channels * kernel * kernel},
      bias_{.name = "bias", .shape = {out_channels}, .init = Init::Zeros} {
  if (in_channels < 1 || out_channels < 1 || kernel < 1 || stride < 1 || padding < 0) {
    fail_input("conv2d: invalid settings: {} -> {} channels, kernel {}, stride {}, padding {}",
               in_channels, out_channels, kernel, stride, padding);
  }
}

Shape Conv2d::configure(const Shape& sample_input) {
  if (sample_input.size() != 3 || sample_input[0] != in_channels_) {
    fail_input("conv2d: expects a sample of shape ({}, H, W), got {}", in_channels_,
               shape_string(sample_input));
  }
  height_ = sample_input[1];
  width_ = sample_input[2];
  const int64_t padded_height = height_ + 2 * padding_;
  const int64_t padded_width = width_ + 2 * padding_;
  if (padded_height < kernel_ || padded_width < kernel_) {
    fail_input("conv2d: a {}x{} kernel with padding {} does not fit input {} (empty output)",
               kernel_, kernel_, padding_, shape_string(sample_input));
  }
  out_height_ = (padded_height - kernel_) / stride_ + 1;
  out_width_ = (padded_width - kernel_) / stride_ + 1;
  return {out_channels_, out_height_, out_width_};
}

ConvSizes Conv2d::sizes(int64_t batch) const {
  return {.batch = batch,
          .in_channels = in_channels_,
          .height = height_,
          .width = width_,
          .out_channels = out_channels_,
          .kernel = kernel_,
          .stride = stride_,
          .padding = padding_,
          .out_height = out_height_,
          .out_width = out_width_};
}

const Tensor& Conv2d::forward(const Tensor& input, Mode mode) {
  (void)mode;
  DTB_CHECK(input.rank() == 4 && input.dim(1) == in_channels_ && input.dim(2) == height_ &&
                input.dim(3) == width_,
            "conv2d configured for ({}, {}, {}) given input {}", in_channels_, height_, width_,
            shape_string(input.shape()));
  input_ = &input;
  const int64_t batch = input.dim(0);
  output_.resize({batch, out_channels_, out_height_, out_width_});
  const float* bias = has_bias_ ? bias_.value : nullptr;
  functions_for(tunings_, sizes(batch), /*forward=*/true).forward(output_.data(), input.data(), weight_.value, bias,
                                    sizes(batch));
  return output_;
}

Tensor& Conv2d::backward(Tensor& grad_output) {
  DTB_CHECK(input_ != nullptr, "conv2d: backward before forward");
  DTB_CHECK(grad_output.shape() == output_.shape(), "conv2d: output gradient {} for output {}",
            shape_string(grad_output.shape()), shape_string(output_.shape()));
  const int64_t batch = input_->dim(0);
  float* dinp = nullptr;
  if (needs_input_grad_) {
    grad_input_.resize(input_->shape());
    dinp = grad_input_.data();
  }
  float* dbias = has_bias_ ? bias_.grad : nullptr;
  functions_for(tunings_, sizes(batch), /*forward=*/false).backward(dinp, weight_.grad, dbias, grad_output.data(),
                                     input_->data(), weight_.value, sizes(batch));
  return grad_input_;
}

void Conv2d::autotune(int64_t batch) {
  if (!tunings_.contains(batch)) tunings_.emplace(batch, tuned_conv(sizes(batch), needs_input_grad_));
}

void Conv2d::collect_params(std::vector<Param*>& out) {
  out.push_back(&weight_);
  if (has_bias_) out.push_back(&bias_);
}

int64_t Conv2d::macs_per_sample() const {
  return out_channels_ * out_height_ * out_width_ * in_channels_ * kernel_ * kernel_;
}

}  // namespace dtbench
