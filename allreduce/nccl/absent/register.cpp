// The build without the CUDA toolkit: no `nccl` transport (the registry says it is not built).
#include "allreduce/nccl/register.h"

#include "core/util/error.h"

namespace dtbench {

void register_nccl_transport(const NcclTransportOptions& options) { (void)options; }
bool nccl_transport_built() { return false; }

std::unique_ptr<NcclBenchBuffer> open_nccl_bench_buffer(MPI_Comm comm, int64_t capacity,
                                                        const NcclTransportOptions& options) {
  (void)comm, (void)capacity, (void)options;
  fail_input("nccl: this dtbench was built without the CUDA toolkit and NCCL (cmake -DDTBENCH_CUDA=ON where they "
             "are installed)");
}

}  // namespace dtbench
