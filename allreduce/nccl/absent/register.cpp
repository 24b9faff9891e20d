// The build without the CUDA toolkit: no `nccl` transport (the registry says it is not built).
#include "allreduce/nccl/register.h"

namespace dtbench {

void register_nccl_transport(const NcclTransportOptions& options) { (void)options; }
bool nccl_transport_built() { return false; }

}  // namespace dtbench
