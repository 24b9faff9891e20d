#include "core/cuda/cublas_library.h"
#include "core/cuda/twins.h"
#include "core/layers/linear.h"
#include "core/util/error.h"

namespace dtbench::cuda {

// cuBLAS is column-major: a row-major (rows, cols) matrix is its transpose there, so
// Y (B, out) = X (B, in) · Wᵀ reads Yᶜ (out, B) = Wᶜᵀ (out, in) · Xᶜ (in, B).
LinearTwin::LinearTwin(CudaContext& context, std::unique_ptr<Layer> host) : Twin(context, std::move(host)) {
  const auto& linear = dynamic_cast<const Linear&>(*host_);
  in_ = linear.in_features();
  out_ = linear.out_features();
}

const Tensor& LinearTwin::forward(const Tensor& input, Mode mode) {
  (void)mode;
  DTB_CHECK(input.rank() >= 2 && input.numel() == input.dim(0) * in_, "linear ({} -> {}) given input {}", in_,
            out_, shape_string(input.shape()));
  const int64_t batch = input.dim(0);
  input_shape_ = input.shape();
  input_ = context_.readable(input, input_staging_);
  output_ = output_buffer_.as({batch, out_});
  const CublasLibrary& cublas = cublas_library();
  const float one = 1.0f, zero = 0.0f;
  const int m = static_cast<int>(out_), n = static_cast<int>(batch), k = static_cast<int>(in_);
  DTB_CUDA(cublas.sgemm(context_.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, value(0), k, input_, k, &zero,
                       output_.data(), m));
  // Y += b · 1ᵀ: the bias added to every sample's column.
  DTB_CUDA(cublas.sger(context_.cublas(), m, n, &one, value(1), 1, context_.ones(batch), 1, output_.data(), m));
  context_.end_operation();
  return output_;
}

Tensor& LinearTwin::backward(Tensor& grad_output) {
  DTB_CHECK(input_ != nullptr, "linear: backward before forward");
  const int64_t batch = input_shape_[0];
  DTB_CHECK(grad_output.numel() == batch * out_, "linear: output gradient {} for batch {}",
            shape_string(grad_output.shape()), batch);
  const float* dy = context_.readable(grad_output, grad_staging_);
  const CublasLibrary& cublas = cublas_library();
  const float one = 1.0f, zero = 0.0f;
  const int m_in = static_cast<int>(in_), m_out = static_cast<int>(out_), n = static_cast<int>(batch);
  // dWᶜ (in, out) = Xᶜ (in, B) · dYᶜᵀ (B, out)
  DTB_CUDA(cublas.sgemm(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_T, m_in, m_out, n, &one, input_, m_in, dy, m_out,
                       &zero, grad(0), m_in));
  // db (out) = dYᶜ (out, B) · 1: the bias gradient as a matrix-vector product.
  DTB_CUDA(cublas.sgemv(context_.cublas(), CUBLAS_OP_N, m_out, n, &one, dy, m_out, context_.ones(batch), 1, &zero,
                       grad(1), 1));
  grad_input_ = Tensor();
  if (needs_input_grad_) {
    grad_input_ = grad_input_buffer_.as(input_shape_);
    // dXᶜ (in, B) = Wᶜ (in, out) · dYᶜ (out, B)
    DTB_CUDA(cublas.sgemm(context_.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, m_in, n, m_out, &one, value(0), m_in,
                         dy, m_out, &zero, grad_input_.data(), m_in));
  }
  context_.end_operation();
  return grad_input_;
}

}  // namespace dtbench::cuda
