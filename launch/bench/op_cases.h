#pragma once
// The operators bench ops times (ops.cpp): the families --ops names, the shapes each is swept
// over, and how to build one family's passes at one shape. A family's passes share its buffers,
// built once per shape and freed before the next, so only one shape's tensors live at a time.
#include <functional>
#include <string>
#include <vector>

#include "core/tensor/tensor.h"

namespace dtbench {

// Which ceiling a pass is held against: the GEMM one in GFLOP/s or the bandwidth one in GB/s.
enum class Bound { Compute, Memory };

// One pass of an operator at one shape, ready to time. `run` does the same work at every call.
struct OpPass {
  std::string name;  // "fwd", "bwd-input", "bwd-weight", "bwd", "step"
  Bound bound = Bound::Memory;
  double work = 0;  // per run: flops (Compute) or bytes (Memory), counted as op_costs.h says
  std::function<void()> run;
};

enum class SizeSet { Small, Default };

struct OpFamily {
  std::string name;  // as --ops names it: "conv"
  std::vector<Shape> small_shapes;
  std::vector<Shape> default_shapes;
  std::function<std::string(const Shape&)> shape_text;  // for the table: "32x64x56x56 -> 64 k3 s1 p1"
  std::function<std::vector<OpPass>(const Shape&)> build;

  const std::vector<Shape>& shapes(SizeSet set) const { return set == SizeSet::Small ? small_shapes : default_shapes; }
};

// Every family, in the order bench ops runs them.
const std::vector<OpFamily>& op_families();
// The families `names` asks for, in catalogue order; every family when `names` is empty. An
// unknown name is an InputError that names it, the option and the known families.
std::vector<const OpFamily*> select_op_families(const std::vector<std::string>& names);

// The builders, one per family: op_cases_gemm_conv.cpp, op_cases_layers.cpp, op_cases_update.cpp.
std::vector<OpPass> gemm_passes(const Shape& m_n_k);
std::vector<OpPass> conv_passes(const Shape& b_c_h_w_cout_k_stride_pad);
// The same for the Winograd kernels (3x3 stride 1 only), which Conv2d runs for those shapes.
std::vector<OpPass> conv_winograd_passes(const Shape& b_c_h_w_cout_3_1_pad);
std::vector<OpPass> conv_winograd4_passes(const Shape& b_c_h_w_cout_3_1_pad);
std::vector<OpPass> maxpool_passes(const Shape& b_c_h_w_k_stride);
std::vector<OpPass> avgpool_passes(const Shape& b_c_h_w_k_stride);
std::vector<OpPass> batchnorm_passes(const Shape& b_c_h_w);
std::vector<OpPass> relu_passes(const Shape& b_c_h_w);
std::vector<OpPass> tanh_passes(const Shape& b_c_h_w);
std::vector<OpPass> sigmoid_passes(const Shape& b_c_h_w);
std::vector<OpPass> softmax_xent_passes(const Shape& batch_classes);
std::vector<OpPass> sgd_passes(const Shape& count);
std::vector<OpPass> adam_passes(const Shape& count);

// Uniform values in [low, high) from a fixed seed: cheap enough for tensors of hundreds of MB.
void fill_uniform(Tensor& tensor, uint64_t seed, float low = -1.0f, float high = 1.0f);

}  // namespace dtbench
