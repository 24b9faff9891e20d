#pragma once
// A residual block's join on the device (bodies/elementwise.h), where its branches' twins leave
// their outputs: the host's join would have to read device memory.
#include <memory>

#include "core/cuda/context.h"
#include "core/layers/residual_join.h"

namespace dtbench::cuda {

std::unique_ptr<ResidualJoin> make_device_residual_join(CudaContext& context);

}  // namespace dtbench::cuda
