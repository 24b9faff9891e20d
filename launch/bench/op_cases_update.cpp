// The families at the end of a step: the softmax cross-entropy loss with its gradient, and the
// optimizers' updates.
#include <memory>
#include <span>

#include "core/layers/loss.h"
#include "core/optim/optimizer.h"
#include "core/util/error.h"
#include "core/util/rng.h"
#include "launch/bench/op_cases.h"
#include "launch/bench/op_costs.h"

namespace dtbench {

namespace {

// Parameters, gradients and an optimizer over them. The parameters drift from step to step, as
// in training; the work per step does not depend on their values.
struct UpdateBench {
  Tensor params, grads;  // (count)
  std::unique_ptr<Optimizer> optimizer;
};

std::vector<OpPass> update_passes(const Shape& s, const OptimizerConfig& config, double bytes) {
  DTB_CHECK(s.size() == 1, "{} shape {}", config.name, shape_string(s));
  auto b = std::make_shared<UpdateBench>(UpdateBench{Tensor(s), Tensor(s), make_optimizer(config, s[0])});
  fill_uniform(b->params, 21);
  fill_uniform(b->grads, 22);
  return {{.name = "step",
           .bound = Bound::Memory,
           .work = bytes,
           .run = [b] { b->optimizer->step(b->params.span(), b->grads.span()); }}};
}

}  // namespace

std::vector<OpPass> softmax_xent_passes(const Shape& s) {
  DTB_CHECK(s.size() == 2, "softmax_xent shape {}", shape_string(s));
  struct Buffers {
    Tensor logits, grad_logits;  // (B, K)
    std::vector<int32_t> labels;  // (B)
  };
  auto b = std::make_shared<Buffers>(Buffers{Tensor(s), Tensor(s), std::vector<int32_t>(static_cast<size_t>(s[0]))});
  fill_uniform(b->logits, 23, -5.0f, 5.0f);
  Rng rng(24);
  for (int32_t& label : b->labels) label = static_cast<int32_t>(rng.below(static_cast<uint64_t>(s[1])));
  return {{.name = "fwd+bwd",
           .bound = Bound::Memory,
           .work = op_costs::softmax_xent_bytes(s[0], s[1]),
           .run = [b] { softmax_cross_entropy(b->logits, b->labels, &b->grad_logits); }}};
}

// Momentum 0.9, as bench step's optimizer.
std::vector<OpPass> sgd_passes(const Shape& s) {
  return update_passes(s, {.name = "sgd", .learning_rate = 0.01f, .momentum = 0.9f},
                       op_costs::sgd_momentum_bytes(s.at(0)));
}

std::vector<OpPass> adam_passes(const Shape& s) {
  return update_passes(s, {.name = "adam", .learning_rate = 1e-3f}, op_costs::adam_bytes(s.at(0)));
}

}  // namespace dtbench
