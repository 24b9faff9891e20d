// The backend's own kernels: each thread runs one index of a body from bodies/ (the same function
// the CPU tests run over the whole index space), over a grid-stride loop.
#include "core/cuda/bodies/elementwise.h"
#include "core/cuda/bodies/softmax_xent.h"
#include "core/cuda/kernels.h"

#include <stdexcept>
#include <string>

namespace dtbench::cuda {

namespace {

constexpr int kThreads = 256;

template <typename Body>
__global__ void for_each_index(int64_t n, Body body) {
  const int64_t stride = int64_t(blockDim.x) * gridDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) body(i);
}

template <typename Body>
void launch(int64_t n, cudaStream_t stream, Body body) {
  if (n <= 0) return;
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  const unsigned grid = static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);
  for_each_index<<<grid, kThreads, 0, stream>>>(n, body);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw std::runtime_error(std::string("CUDA kernel launch failed: ") + cudaGetErrorString(status));
}

}  // namespace

void launch_dropout_forward(float* out, float* mask, const float* in, int64_t n, cuda_bodies::DropoutDraw draw,
                            cudaStream_t stream) {
  launch(cuda_bodies::dropout_groups(n), stream, [=] __device__(int64_t group) {
    cuda_bodies::dropout_forward_group_at(group, out, mask, in, n, draw);
  });
}

void launch_apply_mask(float* out, const float* in, const float* mask, int64_t n, cudaStream_t stream) {
  launch(n, stream, [=] __device__(int64_t i) { cuda_bodies::apply_mask_at(i, out, in, mask); });
}

void launch_scale(float* x, float factor, int64_t n, cudaStream_t stream) {
  launch(n, stream, [=] __device__(int64_t i) { cuda_bodies::scale_at(i, x, factor); });
}

void launch_add_relu(float* y, const float* a, const float* b, int64_t n, cudaStream_t stream) {
  launch(n, stream, [=] __device__(int64_t i) { cuda_bodies::add_relu_at(i, y, a, b); });
}

void launch_relu_grad_copy(float* grad, float* copy, const float* y, int64_t n, cudaStream_t stream) {
  launch(n, stream, [=] __device__(int64_t i) { cuda_bodies::relu_grad_copy_at(i, grad, copy, y); });
}

void launch_accumulate(float* sum, const float* add, int64_t n, cudaStream_t stream) {
  launch(n, stream, [=] __device__(int64_t i) { cuda_bodies::accumulate_at(i, sum, add); });
}

void launch_softmax_xent(float* dlogits, const float* logits, const int32_t* labels, float grad_scale, int64_t B,
                         int64_t K, double* row_loss, int32_t* row_correct, cudaStream_t stream) {
  launch(B, stream, [=] __device__(int64_t b) {
    cuda_bodies::softmax_xent_row(b, dlogits, logits, labels, grad_scale, K, row_loss, row_correct);
  });
}

void launch_sgd(float* p, const float* g, float* velocity, int64_t n, cuda_bodies::SgdHyper hyper,
                cudaStream_t stream) {
  launch(n, stream, [=] __device__(int64_t i) { cuda_bodies::sgd_update_at(i, p, g, velocity, hyper); });
}

void launch_adam(float* p, const float* g, float* m, float* v, int64_t n, cuda_bodies::AdamHyper hyper,
                 cudaStream_t stream) {
  launch(n, stream, [=] __device__(int64_t i) { cuda_bodies::adam_update_at(i, p, g, m, v, hyper); });
}

}  // namespace dtbench::cuda
