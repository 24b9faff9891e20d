#include "allreduce/nccl/nccl_transport.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "allreduce/mpi_check.h"
#include "allreduce/nccl_bootstrap.h"
#include "comm/registry.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

static_assert(sizeof(ncclUniqueId) == kNcclUniqueIdBytes, "the bootstrap moves NCCL's id as it is");

void check_nccl(ncclResult_t result, const char* call) {
  if (result != ncclSuccess) throw IoError(fmt::format("{} failed: {}", call, ncclGetErrorString(result)));
}

void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw IoError(fmt::format("{} failed: {}", call, cudaGetErrorString(status)));
}

}  // namespace

NcclTransport::NcclTransport(OptimizerConfig optimizer, NcclTransportOptions options)
    : LocalUpdateTransport(std::move(optimizer)), options_(std::move(options)) {}

NcclTransport::~NcclTransport() {
  if (nccl_ != nullptr) ncclCommDestroy(nccl_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void NcclTransport::start(Model& model) {
  if (model.device() == nullptr) {
    fail_input("transport nccl reduces gradients on the GPU: it needs device: cuda (got device: cpu; for the CPU "
               "use transport: mpi or ring)");
  }
  check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
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
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check_nccl(ncclCommInitRank(&nccl_, world_, id, rank_), "ncclCommInitRank");
  // Every rank starts from rank 0's weights.
  auto values = model.arena().values();
  check_nccl(ncclBroadcast(values.data(), values.data(), values.size(), ncclFloat, 0, nccl_, stream_), "ncclBroadcast");
  wait("the broadcast of the initial weights");
  int nccl_version = 0;
  ncclGetVersion(&nccl_version);
  summary_ = {{"algorithm", "nccl"}, {"nccl_version", nccl_version}, {"world", world_}};
}

void NcclTransport::synchronize(Model& model, int64_t step, SyncTimes& times) {
  auto grads = model.arena().grads();
  check_nccl(ncclAllReduce(grads.data(), grads.data(), grads.size(), ncclFloat, ncclAvg, nccl_, stream_),
             "ncclAllReduce");
  wait(fmt::format("ncclAllReduce of step {}", step));
  // What a ring moves per rank (NCCL picks its own algorithm; this is the usual bus-bandwidth count).
  const auto bytes = static_cast<int64_t>(grads.size() * sizeof(float) * 2 * (world_ - 1) / std::max(world_, 1));
  times.bytes_sent += bytes;
  times.bytes_received += bytes;
}

void NcclTransport::wait(const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.timeout_seconds);
  for (;;) {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status == cudaSuccess) return;
    if (status != cudaErrorNotReady) check_cuda(status, what.c_str());
    const bool stopped = options_.stop_requested && options_.stop_requested();
    if (stopped || std::chrono::steady_clock::now() > deadline) {
      ncclCommAbort(nccl_);  // the only way out of a collective a peer will never join
      nccl_ = nullptr;
      throw IoError(stopped ? fmt::format("stopped on request while waiting for {}", what)
                            : fmt::format("timed out after {:.1f} s: {}", options_.timeout_seconds, what));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

void NcclTransport::stop(Model& model) {
  // The same weights everywhere, or the run says which differs (as ring and mpi check).
  const auto checksum = static_cast<unsigned long long>(weights_checksum(model.arena().values()));
  unsigned long long low = 0, high = 0;
  check_mpi(MPI_Allreduce(&checksum, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm_), "MPI_Allreduce (checksum)");
  check_mpi(MPI_Allreduce(&checksum, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_), "MPI_Allreduce (checksum)");
  summary_["weights_identical"] = low == high;
  if (low != high) throw IoError(fmt::format("nccl: the workers' weights differ at the end (rank {})", rank_));
}

void register_nccl_transport(const NcclTransportOptions& options) {
  register_transport("nccl", [options](const TransportContext& context) {
    return std::unique_ptr<Transport>(std::make_unique<NcclTransport>(context.optimizer, options));
  });
}

bool nccl_transport_built() { return true; }

}  // namespace dtbench
