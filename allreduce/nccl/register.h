#pragma once
// allreduce/nccl: the `nccl` transport, NCCL's ncclAllReduce over the gradient arena on the device
// (the GPU baseline, as `mpi` is for the CPU), bootstrapped over MPI (allreduce/nccl_bootstrap.h).
// May include allreduce, comm and core. Built as allreduce_nccl with the CUDA toolkit
// (cmake/cuda.cmake); without it, registering adds nothing and the registry refuses `nccl` as not
// built.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "allreduce/request_wait.h"

namespace dtbench {

struct NcclTransportOptions {
  double timeout_seconds = 60.0;  // a collective unfinished this long ends the run
  std::function<bool()> stop_requested;
  PeerWatch* peers = nullptr;  // serviced while waiting for the bootstrap
  // Reduce each bucket (about bucket_bytes of the arena) as backward finishes it, as ring and mpi
  // do (comm.bucket_mb, comm.overlap: both must be on); otherwise the whole arena after backward.
  int64_t bucket_bytes = 0;
  bool overlap = false;
};

// Adds `nccl` to comm/'s transport registry (when built with CUDA). Called once MPI is up.
void register_nccl_transport(const NcclTransportOptions& options);
bool nccl_transport_built();

// Floats in device memory summed across the ranks of an MPI communicator by ncclAllReduce, out
// of place (as nccl-tests' default): what `bench allreduce --transport nccl` times and checks. The
// sum reads the input buffer and writes the result buffer, so a check that first poisons the
// result sees a sum that wrote nothing even at one rank, where the sum is the input
// (launch/bench/nccl_check.h). Its interface names no CUDA type, so the bench compiles without
// the toolkit.
class NcclBenchBuffer {
 public:
  virtual ~NcclBenchBuffer() = default;
  // The first `count` floats of both buffers.
  virtual void fill_zeros(int64_t count) = 0;
  // The first `count` floats of the result buffer set to a pattern no sum gives (all bits set: NaN).
  virtual void poison_result(int64_t count) = 0;
  // The first values.size() floats of the input buffer, from the host; of the result buffer, to it.
  virtual void upload(std::span<const float> values) = 0;
  virtual void download(std::span<float> values) = 0;
  // Sums the input's first `count` floats over every rank into the result's; returns once done
  // (bounded by the options).
  virtual void sum(int64_t count) = 0;
  virtual int nccl_version() const = 0;
};

// `capacity` floats each (input and result) on the caller's current device (open the `cuda` device first: it picks the
// GPU by local rank). InputError in a build without NCCL.
std::unique_ptr<NcclBenchBuffer> open_nccl_bench_buffer(MPI_Comm comm, int64_t capacity,
                                                        const NcclTransportOptions& options);

}  // namespace dtbench
