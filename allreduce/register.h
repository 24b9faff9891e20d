#pragma once
// Adds `ring` and `mpi` to comm/'s transport registry. Called by the command line once MPI is up.
#include "allreduce/allreduce_transport.h"

namespace dtbench {

void register_allreduce_transports(const AllreduceTransportOptions& options);

}  // namespace dtbench
