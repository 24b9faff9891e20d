#pragma once
// One NCCL communicator over an MPI communicator's ranks, with a stream of its own: what the
// `nccl` transport and `bench allreduce --transport nccl` share. NCCL starts from rank 0's unique
// id, sent over MPI (allreduce/nccl_bootstrap.h). Every collective is waited for by polling its
// stream against the deadline; past it, or on a stop request, the communicator is aborted (the
// only way out of a collective a peer will never join) and the wait throws, so a dead peer ends
// the run in bounded time instead of hanging it. The device is the caller's current one.
#include <mpi.h>
#include <nccl.h>

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "allreduce/mpi_comm.h"
#include "allreduce/nccl/register.h"

namespace dtbench {

class NcclCommunicator {
 public:
  // Duplicates `comm` (its own MPI traffic stays apart from the caller's) and joins every rank.
  NcclCommunicator(MPI_Comm comm, NcclTransportOptions options);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  // `input` reduced into `result` (device-accessible; the same pointer: in place); returns once
  // done. `what` names it in errors.
  void all_reduce(const float* input, float* result, size_t count, ncclRedOp_t op, const std::string& what);
  void all_reduce(float* values, size_t count, ncclRedOp_t op, const std::string& what) {
    all_reduce(values, values, count, op, what);
  }
  void broadcast(float* values, size_t count, int root, const std::string& what);

  MPI_Comm mpi() const { return comm_; }
  int rank() const { return rank_; }
  int world() const { return world_; }
  cudaStream_t stream() const { return stream_; }
  static int version();

 private:
  // Waits for the stream; IoError naming `what` after the deadline or a stop.
  void wait(const std::string& what);

  NcclTransportOptions options_;
  MpiComm comm_;  // freed by the MPI session before MPI_Finalize if this outlives it (mpi_comm.h)
  int rank_ = 0;
  int world_ = 1;
  ncclComm_t nccl_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

// IoError naming `call` unless it succeeded.
void check_nccl(ncclResult_t result, const char* call);
void check_cuda_call(cudaError_t status, const char* call);

}  // namespace dtbench
