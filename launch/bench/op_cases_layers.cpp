// The memory-bound layer families: pooling, batch norm and the element-wise activations.
#include <memory>

#include "core/kernels/batchnorm.h"
#include "core/layers/activation.h"
#include "core/layers/pooling.h"
#include "core/util/error.h"
#include "launch/bench/op_cases.h"
#include "launch/bench/op_costs.h"

namespace dtbench {

namespace {

using ByteCount = double (*)(int64_t in_count, int64_t out_count);

// A layer, its input and an output gradient, with one forward already run so that backward may
// run first. These layers' backward leaves the output gradient as it was, so the same gradient
// serves every timed call.
struct LayerBench {
  std::unique_ptr<Layer> layer;
  Tensor input, grad_output;
};

std::vector<OpPass> layer_passes(std::unique_ptr<Layer> layer, const Shape& input_shape, ByteCount forward_bytes,
                                 ByteCount backward_bytes) {
  auto bench = std::make_shared<LayerBench>();
  bench->layer = std::move(layer);
  bench->layer->configure(Shape(input_shape.begin() + 1, input_shape.end()));
  bench->input = Tensor(input_shape);
  fill_uniform(bench->input, 11, -3.0f, 3.0f);  // over tanh's and sigmoid's curved range, half below ReLU's kink
  bench->grad_output = Tensor(bench->layer->forward(bench->input, Mode::Train).shape());
  fill_uniform(bench->grad_output, 12);
  const int64_t in_count = bench->input.numel(), out_count = bench->grad_output.numel();
  return {{.name = "fwd",
           .bound = Bound::Memory,
           .work = forward_bytes(in_count, out_count),
           .run = [bench] { bench->layer->forward(bench->input, Mode::Train); }},
          {.name = "bwd",
           .bound = Bound::Memory,
           .work = backward_bytes(in_count, out_count),
           .run = [bench] { bench->layer->backward(bench->grad_output); }}};
}

std::vector<OpPass> activation_passes(std::unique_ptr<Layer> layer, const Shape& shape) {
  return layer_passes(
      std::move(layer), shape, [](int64_t count, int64_t) { return op_costs::activation_forward_bytes(count); },
      [](int64_t count, int64_t) { return op_costs::activation_backward_bytes(count); });
}

}  // namespace

std::vector<OpPass> maxpool_passes(const Shape& s) {
  DTB_CHECK(s.size() == 6, "maxpool shape {}", shape_string(s));
  return layer_passes(std::make_unique<MaxPool2d>(s[4], s[5]), {s[0], s[1], s[2], s[3]}, op_costs::maxpool_bytes,
                      op_costs::maxpool_bytes);
}

std::vector<OpPass> avgpool_passes(const Shape& s) {
  DTB_CHECK(s.size() == 6, "avgpool shape {}", shape_string(s));
  return layer_passes(std::make_unique<AvgPool2d>(s[4], s[5]), {s[0], s[1], s[2], s[3]}, op_costs::avgpool_bytes,
                      op_costs::avgpool_bytes);
}

std::vector<OpPass> relu_passes(const Shape& s) { return activation_passes(std::make_unique<ReLU>(), s); }
std::vector<OpPass> tanh_passes(const Shape& s) { return activation_passes(std::make_unique<Tanh>(), s); }
std::vector<OpPass> sigmoid_passes(const Shape& s) { return activation_passes(std::make_unique<Sigmoid>(), s); }

// The batch-norm kernels rather than the BatchNorm2d layer: the layer's backward writes the input
// gradient over the output gradient, so repeated timed calls would each start from the last one's
// result; here it goes to its own buffer and every call sees the same output gradient.
std::vector<OpPass> batchnorm_passes(const Shape& s) {
  DTB_CHECK(s.size() == 4, "batchnorm shape {}", shape_string(s));
  const int64_t B = s[0], C = s[1], P = s[2] * s[3];
  struct Buffers {
    Tensor input, output, grad_output, grad_input;          // (B, C, H, W)
    Tensor gamma, beta, mean, var, inv_std, dgamma, dbeta;  // (C)
  };
  auto b = std::make_shared<Buffers>(Buffers{Tensor(s), Tensor(s), Tensor(s), Tensor(s), Tensor({C}), Tensor({C}),
                                             Tensor({C}), Tensor({C}), Tensor({C}), Tensor({C}), Tensor({C})});
  fill_uniform(b->input, 13);
  fill_uniform(b->grad_output, 14);
  b->gamma.fill(1.0f);
  auto forward = [b, B, C, P] {
    kernels::batchnorm_forward_train(b->output.data(), b->mean.data(), b->var.data(), b->inv_std.data(),
                                     b->input.data(), b->gamma.data(), b->beta.data(), 1e-5f, B, C, P);
  };
  forward();  // the statistics backward needs
  const int64_t count = B * C * P;
  return {{.name = "fwd", .bound = Bound::Memory, .work = op_costs::batchnorm_forward_bytes(count), .run = forward},
          {.name = "bwd",
           .bound = Bound::Memory,
           .work = op_costs::batchnorm_backward_bytes(count),
           .run = [b, B, C, P] {
             kernels::batchnorm_backward(b->grad_input.data(), b->dgamma.data(), b->dbeta.data(),
                                         b->grad_output.data(), b->input.data(), b->mean.data(), b->inv_std.data(),
                                         b->gamma.data(), true, B, C, P);
           }}};
}

}  // namespace dtbench
