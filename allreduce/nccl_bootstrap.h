#pragma once
// NCCL's communicator starts from one unique id that rank 0 creates and every rank must hold; it
// travels over MPI, as NCCL's own examples bootstrap it. Here the id is opaque bytes, so this part
// is plain MPI and is tested without a GPU (tests/allreduce), while allreduce/nccl/ makes the id
// with ncclGetUniqueId.
#include <mpi.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "allreduce/request_wait.h"

namespace dtbench {

constexpr size_t kNcclUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES (checked where nccl.h is seen)
using NcclUniqueIdBytes = std::array<char, kNcclUniqueIdBytes>;

// Rank 0 of `comm` calls `create` (only it does); every rank returns rank 0's bytes. IoError when
// rank 0 does not send them within the wait's deadline.
NcclUniqueIdBytes bootstrap_unique_id(MPI_Comm comm, const std::function<NcclUniqueIdBytes()>& create,
                                      const WaitPolicy& wait);

// NCCL refuses a communicator in which two ranks drive one GPU ("invalid usage", after its own
// set-up), so before it starts every rank names its GPU — `gpu`, e.g. "host-a/0000:1b:00.0" — and
// every rank fails with an InputError naming the first two ranks that share one and what to do.
// IoError when a rank does not answer within the wait's deadline.
void require_a_gpu_per_rank(MPI_Comm comm, const std::string& gpu, const WaitPolicy& wait);

// The first two ranks (in rank order) whose entries are equal, or {-1, -1}.
std::array<int, 2> first_shared_gpu(const std::vector<std::string>& gpu_of_rank);

}  // namespace dtbench
