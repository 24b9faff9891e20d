#pragma once
// A layer is a forward/backward pair over batched tensors (batch is dimension 0). Forward keeps
// what backward needs; backward runs in reverse layer order, writes (not accumulates) the
// gradients of the layer's parameters into the gradient arena and returns the gradient with
// respect to the layer's input.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/profile/operator_times.h"
#include "core/tensor/param_arena.h"
#include "core/tensor/tensor.h"

namespace dtbench {

enum class Mode { Train, Eval };

class Layer {
 public:
  virtual ~Layer() = default;

  // Operator family, for listings and per-operator timing: "conv2d", "linear", "batchnorm2d" ...
  virtual std::string kind() const = 0;

  // Called once when the model is built, with one sample's input shape (no batch dimension).
  // Checks that the input fits (throws InputError naming the layer and the shapes otherwise) and
  // returns one sample's output shape.
  virtual Shape configure(const Shape& sample_input) = 0;

  // `input` must stay alive and unchanged until backward. The result is owned by the layer (or is
  // `input` itself for in-place layers) and stays valid until the next forward.
  virtual const Tensor& forward(const Tensor& input, Mode mode) = 0;

  // `grad_output` has the shape of the last forward's output and may be overwritten. Returns
  // dL/d(input), which may alias `grad_output`. When the layer does not need its input gradient
  // (the model's first layer) it may skip computing it and return an empty tensor.
  virtual Tensor& backward(Tensor& grad_output) = 0;

  // The next four describe the layer's own state only, never its children's: the model walks
  // the tree (children()) and names everything by its path, "layer1.0.conv1.weight".
  // Own parameters in declaration order, appended to `out`, with local names ("weight").
  virtual void collect_params(std::vector<Param*>& out) { (void)out; }
  // Own non-trained state that still defines the model (batch norm running statistics).
  virtual void collect_buffers(std::vector<Tensor*>& out) { (void)out; }
  // Own multiply-accumulates of one forward pass over one sample (valid after configure).
  virtual int64_t macs_per_sample() const { return 0; }
  // Stochastic layers (dropout) draw from a generator the model seeds; the rest ignore it.
  virtual void reseed(uint64_t seed) { (void)seed; }
  // Does ahead of training what this layer's first pass at this batch size would do once, slowly
  // (a CUDA convolution: cuDNN's algorithm search), so that no timed step holds it; returns once
  // done. Own work only, as above; most layers have none.
  virtual void autotune(int64_t batch) { (void)batch; }
  // Children of composite layers, in order, with their local names ("0", "conv1").
  virtual std::vector<std::pair<std::string, Layer*>> children() { return {}; }

  void set_needs_input_grad(bool needs) { needs_input_grad_ = needs; }
  bool needs_input_grad() const { return needs_input_grad_; }
  // Composite layers time the layers they run (and their own work) into `times` when it is set.
  void set_operator_times(OperatorTimes* times) { operator_times_ = times; }

 protected:
  bool needs_input_grad_ = true;
  OperatorTimes* operator_times_ = nullptr;
};

}  // namespace dtbench
