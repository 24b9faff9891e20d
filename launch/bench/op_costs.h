#pragma once
// The work an operator pass must do at the least, so that bench ops can turn a time into a rate:
// floating-point operations for the compute-bound passes (GEMM, convolution), bytes to and from
// memory for the memory-bound rest. The conventions:
//  - a multiply-add is 2 flops; bias additions, im2col copies and reductions are not counted;
//  - bytes are the compulsory traffic of the float32 (and int32 index) tensors a pass touches:
//    each tensor it reads is read once, each it writes is written once, with no write-allocate
//    reads (STREAM's count, and the bandwidth ceiling is measured the same way); per-channel
//    vectors (batch norm's statistics and parameters) are left out, being tiny.
// A kernel that reads a tensor twice (batch norm's statistics pass, then its normalising pass)
// still counts it once: the percentage of the ceiling then shows what the second pass costs.
#include <cstdint>

#include "core/kernels/im2col.h"

namespace dtbench::op_costs {

// C (m, n) = A (m, k) · B (k, n): 2·m·n·k.
double gemm_flops(int64_t m, int64_t n, int64_t k);

// Each of the forward pass, the input gradient and the weight gradient: 2·B·Cout·C·k·k·Ho·Wo,
// one multiply-add per weight and output position (positions over the padding included, as the
// im2col product computes them).
double conv2d_flops(const ConvSizes& sizes);

// An element-wise activation over `count` values: forward reads x and writes y (2 tensors);
// backward reads dy and y, writes dx (3 tensors).
double activation_forward_bytes(int64_t count);
double activation_backward_bytes(int64_t count);

// Max pooling from in_count to out_count values. Forward reads x, writes y and the int32 argmax;
// backward reads dy and the argmax, writes dx: the same bytes either way.
double maxpool_bytes(int64_t in_count, int64_t out_count);
// Average pooling: x and y forward, dy and dx backward.
double avgpool_bytes(int64_t in_count, int64_t out_count);

// Batch norm in training over `count` values: forward reads x, writes y (2 tensors); backward
// reads x and dy, writes dx (3 tensors).
double batchnorm_forward_bytes(int64_t count);
double batchnorm_backward_bytes(int64_t count);

// Softmax cross-entropy fused with its gradient: reads logits (B, K) and the int32 labels (B),
// writes dlogits (B, K).
double softmax_xent_bytes(int64_t batch, int64_t classes);

// One optimizer step over `count` parameters. SGD with momentum reads p, g, v and writes p, v
// (5 arrays); Adam reads p, g, m, v and writes p, m, v (7 arrays).
double sgd_momentum_bytes(int64_t count);
double adam_bytes(int64_t count);

}  // namespace dtbench::op_costs
