// The compute-bound families: a plain sgemm, and the convolution's three passes by im2col + sgemm
// and by Winograd.
#include <cblas.h>

#include <memory>

#include "core/kernels/conv_gemm.h"
#include "core/kernels/conv_winograd.h"
#include "core/util/error.h"
#include "launch/bench/op_cases.h"
#include "launch/bench/op_costs.h"

namespace dtbench {

std::vector<OpPass> gemm_passes(const Shape& m_n_k) {
  DTB_CHECK(m_n_k.size() == 3, "gemm shape {}", shape_string(m_n_k));
  const int m = static_cast<int>(m_n_k[0]), n = static_cast<int>(m_n_k[1]), k = static_cast<int>(m_n_k[2]);
  struct Buffers {
    Tensor a, b, c;  // (m, k), (k, n), (m, n)
  };
  auto buffers = std::make_shared<Buffers>(Buffers{Tensor({m, k}), Tensor({k, n}), Tensor({m, n})});
  fill_uniform(buffers->a, 1);
  fill_uniform(buffers->b, 2);
  // Row-major, no transposes, on OpenBLAS's own threads, as the linear layers call it.
  auto run = [buffers, m, n, k] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, buffers->a.data(), k, buffers->b.data(), n,
                0.0f, buffers->c.data(), n);
  };
  return {{.name = "nn", .bound = Bound::Compute, .work = op_costs::gemm_flops(m, n, k), .run = run}};
}

namespace {

using ConvForward = void (*)(float*, const float*, const float*, const float*, const ConvSizes&);
using ConvBackward = void (*)(float*, float*, float*, const float*, const float*, const float*,
                              const ConvSizes&);

// The convolution kernels rather than the Conv2d layer: the layer's backward computes both
// gradients in one call, while the kernel computes either alone, so each pass gets its own time.
// No bias, as in ResNet's convolutions (a batch norm follows each). The work is the direct
// convolution's either way, so a faster algorithm shows as more than 100% of the sgemm ceiling.
std::vector<OpPass> conv_kernel_passes(const Shape& s, ConvForward forward, ConvBackward backward) {
  DTB_CHECK(s.size() == 8, "conv shape {}", shape_string(s));
  ConvSizes sizes{.batch = s[0],
                  .in_channels = s[1],
                  .height = s[2],
                  .width = s[3],
                  .out_channels = s[4],
                  .kernel = s[5],
                  .stride = s[6],
                  .padding = s[7]};
  sizes.out_height = (sizes.height + 2 * sizes.padding - sizes.kernel) / sizes.stride + 1;
  sizes.out_width = (sizes.width + 2 * sizes.padding - sizes.kernel) / sizes.stride + 1;
  DTB_CHECK(sizes.out_height >= 1 && sizes.out_width >= 1, "conv shape {} has no output", shape_string(s));
  struct Buffers {
    Tensor input, grad_input;    // (B, C, H, W)
    Tensor weight, grad_weight;  // (Cout, C, k, k)
    Tensor output, grad_output;  // (B, Cout, Ho, Wo)
  };
  const Shape input_shape{sizes.batch, sizes.in_channels, sizes.height, sizes.width};
  const Shape weight_shape{sizes.out_channels, sizes.in_channels, sizes.kernel, sizes.kernel};
  const Shape output_shape{sizes.batch, sizes.out_channels, sizes.out_height, sizes.out_width};
  auto b = std::make_shared<Buffers>(Buffers{Tensor(input_shape), Tensor(input_shape), Tensor(weight_shape),
                                             Tensor(weight_shape), Tensor(output_shape), Tensor(output_shape)});
  fill_uniform(b->input, 3);
  fill_uniform(b->weight, 4, -0.1f, 0.1f);
  fill_uniform(b->grad_output, 5);
  const double flops = op_costs::conv2d_flops(sizes);
  return {
      {.name = "fwd",
       .bound = Bound::Compute,
       .work = flops,
       .run = [b, sizes, forward] { forward(b->output.data(), b->input.data(), b->weight.data(), nullptr, sizes); }},
      {.name = "bwd-input",
       .bound = Bound::Compute,
       .work = flops,
       .run = [b, sizes, backward] {
         backward(b->grad_input.data(), nullptr, nullptr, b->grad_output.data(), b->input.data(),
                         b->weight.data(), sizes);
       }},
      {.name = "bwd-weight",
       .bound = Bound::Compute,
       .work = flops,
       .run = [b, sizes, backward] {
         backward(nullptr, b->grad_weight.data(), nullptr, b->grad_output.data(), b->input.data(),
                         b->weight.data(), sizes);
       }},
  };
}

}  // namespace

std::vector<OpPass> conv_passes(const Shape& s) { return conv_kernel_passes(s, conv2d_forward, conv2d_backward); }

std::vector<OpPass> conv_winograd_passes(const Shape& s) {
  DTB_CHECK(s.size() == 8 && s[5] == 3 && s[6] == 1, "conv_winograd shape {}: 3x3 stride 1 only", shape_string(s));
  return conv_kernel_passes(s, conv2d_winograd_forward, conv2d_winograd_backward);
}

std::vector<OpPass> conv_winograd4_passes(const Shape& s) {
  DTB_CHECK(s.size() == 8 && s[5] == 3 && s[6] == 1, "conv_winograd4 shape {}: 3x3 stride 1 only", shape_string(s));
  return conv_kernel_passes(s, conv2d_winograd4_forward, conv2d_winograd4_backward);
}

}  // namespace dtbench
