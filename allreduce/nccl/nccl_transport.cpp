#include "allreduce/nccl/nccl_transport.h"

#include <algorithm>

#include <fmt/format.h>

#include "allreduce/mpi_check.h"
#include "comm/registry.h"
#include "core/util/error.h"

namespace dtbench {

NcclTransport::NcclTransport(OptimizerConfig optimizer, NcclTransportOptions options)
    : LocalUpdateTransport(std::move(optimizer)), options_(std::move(options)) {}

void NcclTransport::begin(Model& model) {
  if (model.device() == nullptr) {
    fail_input("transport nccl reduces gradients on the GPU: it needs device: cuda (got device: cpu; for the CPU "
               "use transport: mpi or ring)");
  }
  nccl_ = std::make_unique<NcclCommunicator>(MPI_COMM_WORLD, options_);
  // Every rank starts from rank 0's weights (Model::initialize put them on the device).
  const auto values = model.device()->device_view(model.arena().values());
  nccl_->broadcast(values.data(), values.size(), 0, "the broadcast of the initial weights");
  summary_ = {{"algorithm", std::string(kNcclTransport)}, {"nccl_version", NcclCommunicator::version()}, {"world", nccl_->world()}};
}

void NcclTransport::synchronize(Model& model, int64_t step, SyncTimes& times) {
  const auto grads = model.device()->device_view(model.arena().grads());
  nccl_->all_reduce(grads.data(), grads.size(), ncclAvg, fmt::format("ncclAllReduce of step {}", step));
  // What a ring moves per rank (NCCL picks its own algorithm; this is the usual bus-bandwidth count).
  const int world = nccl_->world();
  const auto bytes = static_cast<int64_t>(grads.size() * sizeof(float) * 2 * (world - 1) / std::max(world, 1));
  times.bytes_sent += bytes;
  times.bytes_received += bytes;
}

void NcclTransport::end(Model& model) {
  // The same weights everywhere, or the run says which differs (as ring and mpi check); Transport::stop
  // copied them to the host.
  const auto checksum = static_cast<unsigned long long>(weights_checksum(model.arena().values()));
  unsigned long long low = 0, high = 0;
  const MPI_Comm comm = nccl_->mpi();
  check_mpi(MPI_Allreduce(&checksum, &low, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm), "MPI_Allreduce (checksum)");
  check_mpi(MPI_Allreduce(&checksum, &high, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm), "MPI_Allreduce (checksum)");
  summary_["weights_identical"] = low == high;
  if (low != high) throw IoError(fmt::format("nccl: the workers' weights differ at the end (rank {})", nccl_->rank()));
}

void register_nccl_transport(const NcclTransportOptions& options) {
  register_transport(std::string(kNcclTransport), [options](const TransportContext& context) {
    return std::unique_ptr<Transport>(std::make_unique<NcclTransport>(context.optimizer, options));
  });
}

bool nccl_transport_built() { return true; }

}  // namespace dtbench
