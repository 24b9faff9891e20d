#include "core/layers/linear.h"

#include "core/kernels/linear_gemm.h"
#include "core/util/error.h"

namespace dtbench {

Linear::Linear(int64_t in_features, int64_t out_features, Init weight_init)
    : in_(in_features),
      out_(out_features),
      weight_{.name = "weight",
              .shape = {out_features, in_features},
              .init = weight_init,
              .fan_in = in_features,
              .fan_out = out_features},
      bias_{.name = "bias", .shape = {out_features}, .init = Init::Zeros} {
  if (in_features < 1 || out_features < 1) {
    fail_input("linear: features must be positive, got {} -> {}", in_features, out_features);
  }
}

Shape Linear::configure(const Shape& sample_input) {
  // Any sample shape is flattened, so only its element count has to match.
  if (sample_input.empty() || element_count(sample_input) != in_) {
    fail_input("linear: expects {} input features per sample, got sample shape {}", in_,
               shape_string(sample_input));
  }
  return {out_};
}

const Tensor& Linear::forward(const Tensor& input, Mode mode) {
  (void)mode;
  DTB_CHECK(input.rank() >= 2 && input.numel() == input.dim(0) * in_,
            "linear ({} -> {}) given input {}", in_, out_, shape_string(input.shape()));
  input_ = &input;
  const int64_t batch = input.dim(0);
  output_.resize({batch, out_});
  linear_forward(output_.data(), input.data(), weight_.value, bias_.value, batch, in_, out_);
  return output_;
}

Tensor& Linear::backward(Tensor& grad_output) {
  DTB_CHECK(input_ != nullptr, "linear: backward before forward");
  const int64_t batch = input_->dim(0);
  DTB_CHECK(grad_output.numel() == batch * out_, "linear: output gradient {} for batch {}",
            shape_string(grad_output.shape()), batch);
  float* dinp = nullptr;
  if (needs_input_grad_) {
    grad_input_.resize(input_->shape());
    dinp = grad_input_.data();
  }
  linear_backward(dinp, weight_.grad, bias_.grad, grad_output.data(), input_->data(),
                  weight_.value, batch, in_, out_);
  return grad_input_;
}

void Linear::collect_params(std::vector<Param*>& out) {
  out.push_back(&weight_);
  out.push_back(&bias_);
}

}  // namespace dtbench
