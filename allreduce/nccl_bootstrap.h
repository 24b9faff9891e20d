#pragma once
// NCCL's communicator starts from one unique id that rank 0 creates and every rank must hold; it
// travels over MPI, as NCCL's own examples bootstrap it. Here the id is opaque bytes, so this part
// is plain MPI and is tested without a GPU (tests/allreduce), while allreduce/nccl/ makes the id
// with ncclGetUniqueId.
#include <mpi.h>

#include <array>
#include <functional>

#include "allreduce/request_wait.h"

namespace dtbench {

constexpr size_t kNcclUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES (checked where nccl.h is seen)
using NcclUniqueIdBytes = std::array<char, kNcclUniqueIdBytes>;

// Rank 0 of `comm` calls `create` (only it does); every rank returns rank 0's bytes. IoError when
// rank 0 does not send them within the wait's deadline.
NcclUniqueIdBytes bootstrap_unique_id(MPI_Comm comm, const std::function<NcclUniqueIdBytes()>& create,
                                      const WaitPolicy& wait);

}  // namespace dtbench
