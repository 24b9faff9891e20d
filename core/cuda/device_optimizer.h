#pragma once
// SGD and Adam on the device: the arena's update as one kernel over the bodies in
// bodies/optimizer_updates.h, the state (velocity, moments) in managed memory laid out as the CPU
// optimizer's, so state() and restore() (checkpoints) work unchanged.
#include <memory>

#include "core/cuda/context.h"
#include "core/optim/optimizer.h"

namespace dtbench::cuda {

// InputError for what make_optimizer (core/optim) would refuse.
std::unique_ptr<Optimizer> make_device_optimizer(CudaContext& context, const OptimizerConfig& config, int64_t count);

}  // namespace dtbench::cuda
