#include "launch/bench/op_costs.h"

namespace dtbench::op_costs {

namespace {

constexpr double kValueBytes = 4.0;  // float32 and int32 alike

// `tensors` whole tensors of `count` values each, every one read or written once.
double tensor_bytes(double tensors, int64_t count) { return tensors * kValueBytes * static_cast<double>(count); }

}  // namespace

double gemm_flops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double conv2d_flops(const ConvSizes& s) {
  return gemm_flops(s.out_channels, s.batch * s.out_plane(), s.patch_count());
}

double activation_forward_bytes(int64_t count) { return tensor_bytes(2, count); }
double activation_backward_bytes(int64_t count) { return tensor_bytes(3, count); }

double maxpool_bytes(int64_t in_count, int64_t out_count) {
  return tensor_bytes(1, in_count) + tensor_bytes(2, out_count);
}
double avgpool_bytes(int64_t in_count, int64_t out_count) {
  return tensor_bytes(1, in_count) + tensor_bytes(1, out_count);
}

double batchnorm_forward_bytes(int64_t count) { return tensor_bytes(2, count); }
double batchnorm_backward_bytes(int64_t count) { return tensor_bytes(3, count); }

double softmax_xent_bytes(int64_t batch, int64_t classes) {
  return tensor_bytes(2, batch * classes) + tensor_bytes(1, batch);
}

double sgd_momentum_bytes(int64_t count) { return tensor_bytes(5, count); }
double adam_bytes(int64_t count) { return tensor_bytes(7, count); }

}  // namespace dtbench::op_costs
