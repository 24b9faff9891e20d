#pragma once
// SGD and Adam on the device: the arena's update as one kernel over the bodies in
// bodies/optimizer_updates.h, on the device's copy of the arena (the spans step() is given are the
// host's, context.h). The state (velocity, moments) is mirrored host memory laid out as the CPU
// optimizer's: state() copies the device's to the host before it returns it, restore() the host's
// back to the device.
#include <memory>

#include "core/cuda/context.h"
#include "core/optim/optimizer.h"

namespace dtbench::cuda {

// InputError for what make_optimizer (core/optim) would refuse.
std::unique_ptr<Optimizer> make_device_optimizer(CudaContext& context, const OptimizerConfig& config, int64_t count);

}  // namespace dtbench::cuda
