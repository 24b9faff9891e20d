#pragma once
// Launchers of the backend's own kernels: one thread per index of the bodies in bodies/, on the
// given stream. Only what cuDNN and cuBLAS do not offer.
#include <cstdint>

#include <cuda_runtime.h>

#include "core/cuda/bodies/dropout.h"
#include "core/cuda/bodies/optimizer_updates.h"

namespace dtbench::cuda {

// mask (n) and out (n) = in · mask of one dropout pass (bodies/dropout.h), one thread per four elements.
void launch_dropout_forward(float* out, float* mask, const float* in, int64_t n, cuda_bodies::DropoutDraw draw,
                            cudaStream_t stream);
void launch_apply_mask(float* out, const float* in, const float* mask, int64_t n, cudaStream_t stream);
void launch_scale(float* x, float factor, int64_t n, cudaStream_t stream);
void launch_add_relu(float* y, const float* a, const float* b, int64_t n, cudaStream_t stream);
void launch_relu_grad_copy(float* grad, float* copy, const float* y, int64_t n, cudaStream_t stream);
void launch_accumulate(float* sum, const float* add, int64_t n, cudaStream_t stream);
// row_loss (B) and row_correct (B) are device-readable; the caller sums them in row order.
void launch_softmax_xent(float* dlogits, const float* logits, const int32_t* labels, float grad_scale, int64_t B,
                         int64_t K, double* row_loss, int32_t* row_correct, cudaStream_t stream);
void launch_sgd(float* p, const float* g, float* velocity, int64_t n, cuda_bodies::SgdHyper hyper,
                cudaStream_t stream);
void launch_adam(float* p, const float* g, float* m, float* v, int64_t n, cuda_bodies::AdamHyper hyper,
                 cudaStream_t stream);

}  // namespace dtbench::cuda
