// The build without the CUDA toolkit: no device backend to register, so `device: cuda` is refused
// by core/device with the reason (built without it).
#include "core/cuda/register.h"

namespace dtbench {

void register_device_backends() {}
bool cuda_backend_built() { return false; }
std::string cuda_backend_toolkit() { return ""; }
int cuda_device_count() { return 0; }

}  // namespace dtbench
