#include "allreduce/nccl/nccl_communicator.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "allreduce/mpi_check.h"
#include "allreduce/nccl_bootstrap.h"
#include "core/util/error.h"

namespace dtbench {

static_assert(sizeof(ncclUniqueId) == kNcclUniqueIdBytes, "the bootstrap moves NCCL's id as it is");

void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) throw IoError(fmt::format("{} failed: {}", call, ncclGetErrorString(result)));
}

void check_cuda_call(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw IoError(fmt::format("{} failed: {}", call, cudaGetErrorString(status)));
}

namespace {

// The caller's current GPU as "host/PCI bus id": the same on every rank that drives it.
std::string this_gpu() {
  int device = 0;
  check_cuda_call(cudaGetDevice(&device), "cudaGetDevice");
  char bus_id[32] = {};
  check_cuda_call(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id) - 1, device), "cudaDeviceGetPCIBusId");
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return fmt::format("{}/{}", host, bus_id);
}

}  // namespace

NcclCommunicator::NcclCommunicator(MPI_Comm comm, NcclTransportOptions options) : options_(std::move(options)) {
  MPI_Comm copy = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &copy), "MPI_Comm_dup");
  comm_ = MpiComm(copy);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &world_);
  const NcclUniqueIdBytes id_bytes = bootstrap_unique_id(
      comm_,
      [] {
        ncclUniqueId id;
        check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
        NcclUniqueIdBytes bytes;
        std::copy(id.internal, id.internal + kNcclUniqueIdBytes, bytes.begin());
        return bytes;
      },
      {.timeout_seconds = options_.timeout_seconds, .stop_requested = options_.stop_requested,
       .describe = [] { return std::string("the NCCL unique id from rank 0"); }, .peers = options_.peers});
  ncclUniqueId id;
  std::copy(id_bytes.begin(), id_bytes.end(), id.internal);
  require_a_gpu_per_rank(comm_, this_gpu(),
                         {.timeout_seconds = options_.timeout_seconds, .stop_requested = options_.stop_requested,
                          .describe = [] { return std::string("every rank's GPU"); }, .peers = options_.peers});
  check_cuda_call(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check_nccl(ncclCommInitRank(&nccl_, world_, id, rank_), "ncclCommInitRank");
}

NcclCommunicator::~NcclCommunicator() {
  if (nccl_ != nullptr) ncclCommDestroy(nccl_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void NcclCommunicator::all_reduce(const float* input, float* result, size_t count, ncclRedOp_t op,
                                  const std::string& what) {
  if (nccl_ == nullptr) throw IoError(fmt::format("{}: the NCCL communicator was aborted earlier", what));
  check_nccl(ncclAllReduce(input, result, count, ncclFloat, op, nccl_, stream_), "ncclAllReduce");
  wait(what);
}

void NcclCommunicator::broadcast(float* values, size_t count, int root, const std::string& what) {
  if (nccl_ == nullptr) throw IoError(fmt::format("{}: the NCCL communicator was aborted earlier", what));
  check_nccl(ncclBroadcast(values, values, count, ncclFloat, root, nccl_, stream_), "ncclBroadcast");
  wait(what);
}

int NcclCommunicator::version() {
  int version = 0;
  ncclGetVersion(&version);
  return version;
}

void NcclCommunicator::wait(const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.timeout_seconds);
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) check_cuda_call(status, what.c_str());
    const bool stopped = options_.stop_requested && options_.stop_requested();
    if (stopped || std::chrono::steady_clock::now() > deadline) {
      ncclCommAbort(nccl_);
      nccl_ = nullptr;
      throw IoError(stopped ? fmt::format("stopped on request while waiting for {}", what)
                            : fmt::format("timed out after {:.1f} s: {}", options_.timeout_seconds, what));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace dtbench
