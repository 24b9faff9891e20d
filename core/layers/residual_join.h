#pragma once
// The elementwise end of a residual block, y = max(main + shortcut, 0), and its gradient. The
// host's runs over host memory; a device backend gives its own (DeviceBackend::residual_join), so
// that a block whose branches run on the device joins them there, where their outputs are.
#include <memory>

#include "core/tensor/tensor.h"

namespace dtbench {

class ResidualJoin {
 public:
  virtual ~ResidualJoin() = default;
  // y = max(main + shortcut, 0), valid until the next forward.
  virtual const Tensor& forward(const Tensor& main, const Tensor& shortcut) = 0;
  // Takes the block's output gradient through the final ReLU, in place (zero where y was not
  // positive), and gives back a copy of it for the shortcut branch: the main branch may overwrite
  // its own.
  virtual Tensor& backward(Tensor& grad_output) = 0;
  // sum += other: the input gradient is the main branch's plus the shortcut's.
  virtual void accumulate(Tensor& sum, const Tensor& other) = 0;
};

std::unique_ptr<ResidualJoin> make_host_residual_join();

}  // namespace dtbench
