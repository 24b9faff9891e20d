#pragma once
// The training loop's phase marks as CUDA events on the worker's stream: recording one costs a
// few microseconds and no wait; the step's end waits for the last and reads them all.
#include <memory>

#include "core/cuda/context.h"
#include "core/device/device.h"

namespace dtbench::cuda {

std::unique_ptr<PhaseMarks> make_phase_marks(CudaContext& context, int count);

}  // namespace dtbench::cuda
