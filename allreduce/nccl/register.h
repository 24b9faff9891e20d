#pragma once
// allreduce/nccl: the `nccl` transport, NCCL's ncclAllReduce over the gradient arena on the device
// (the GPU baseline, as `mpi` is for the CPU), bootstrapped over MPI (allreduce/nccl_bootstrap.h).
// May include allreduce, comm and core. Built as allreduce_nccl with the CUDA toolkit
// (cmake/cuda.cmake); without it, registering adds nothing and the registry refuses `nccl` as not
// built.
#include <functional>

#include "allreduce/request_wait.h"

namespace dtbench {

struct NcclTransportOptions {
  double timeout_seconds = 60.0;  // a collective unfinished this long ends the run
  std::function<bool()> stop_requested;
  PeerWatch* peers = nullptr;  // serviced while waiting for the bootstrap
};

// Adds `nccl` to comm/'s transport registry (when built with CUDA). Called once MPI is up.
void register_nccl_transport(const NcclTransportOptions& options);
bool nccl_transport_built();

}  // namespace dtbench
