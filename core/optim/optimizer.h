#pragma once
// Optimizers over flat float ranges: a whole arena on a worker, or one key range on a parameter
// server. State (momentum, moments) is kept per element, laid out like the parameters.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace dtbench {

struct OptimizerConfig {
  std::string name = "sgd";  // sgd | adam
  float learning_rate = 0.01f;
  float momentum = 0.0f;      // sgd
  float weight_decay = 0.0f;  // L2, added to the gradient (as torch.optim.SGD / Adam do)
  bool nesterov = false;      // sgd
  float beta1 = 0.9f;         // adam
  float beta2 = 0.999f;       // adam
  float epsilon = 1e-8f;      // adam
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // params -= f(grads); both spans have the size given at construction.
  virtual void step(std::span<float> params, std::span<const float> grads) = 0;
  // The same step taken in parts, for a parameter server that updates a large shard a block at a
  // time, into another buffer, on several threads: begin_step() once, then step_part() over
  // disjoint parts that together cover every float once (any order, any thread; `offset` is the
  // part's first float). Element for element what step() computes. The host optimizers have it;
  // the others throw LogicError.
  virtual void begin_step();
  virtual void step_part(int64_t offset, std::span<float> params, std::span<const float> grads);
  virtual std::string name() const = 0;
  // The per-element state (for checkpoints and tests), concatenated.
  virtual std::span<const float> state() const = 0;
  int64_t steps_taken() const { return steps_; }
  // Puts back what state() and steps_taken() said earlier: a checkpoint's, or the state before an
  // update a parameter server refused after the fact. InputError when the sizes differ.
  void restore(std::span<const float> state, int64_t steps);

 protected:
  // After restore() wrote the state through state()'s view: an optimizer that keeps a copy of it
  // elsewhere (on a device) takes it from there.
  virtual void restored() {}

  int64_t steps_ = 0;
};

// An InputError names the unknown optimizer or bad hyper-parameter.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config, int64_t count);

}  // namespace dtbench
