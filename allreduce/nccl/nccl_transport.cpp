#include "allreduce/nccl/nccl_transport.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "allreduce/mpi_check.h"
#include "comm/registry.h"
#include "core/util/clock.h"
#include "core/util/error.h"

namespace dtbench {

NcclTransport::NcclTransport(OptimizerConfig optimizer, NcclTransportOptions options)
    : LocalUpdateTransport(std::move(optimizer)), options_(std::move(options)) {
  if (options_.overlap && options_.bucket_bytes <= 0) {
    fail_input("comm.overlap needs buckets: set comm.bucket_mb > 0 (overlap reduces bucket by bucket)");
  }
}

NcclTransport::~NcclTransport() {
  pipeline_.reset();  // its thread may be reducing a bucket through nccl_
  if (model_ != nullptr) model_->set_gradient_ready_hook({});
}

void NcclTransport::begin(Model& model) {
  if (model.device() == nullptr) {
    fail_input("transport nccl reduces gradients on the GPU: it needs device: cuda (got device: cpu; for the CPU "
               "use transport: mpi or ring)");
  }
  nccl_ = std::make_unique<NcclCommunicator>(MPI_COMM_WORLD, options_);
  // Every rank starts from rank 0's weights (Model::initialize put them on the device).
  const auto values = model.device()->device_view(model.arena().values());
  nccl_->broadcast(values.data(), values.size(), 0, "the broadcast of the initial weights");
  if (options_.overlap && nccl_->world() > 1) {
    model_ = &model;
    check_cuda_call(cudaGetDevice(&cuda_device_), "cudaGetDevice");
    BucketPlan plan = BucketPlan::contiguous(model.arena(), options_.bucket_bytes);
    buckets_ = plan.ranges();
    pipeline_ = std::make_unique<BucketPipeline>(
        std::move(plan),
        [this](int bucket) {
          check_cuda_call(cudaSetDevice(cuda_device_), "cudaSetDevice");  // a thread starts on device 0
          const ArenaRange& range = buckets_[static_cast<size_t>(bucket)];
          const auto grads = model_->device()->device_view(model_->arena().grads());
          nccl_->all_reduce(grads.data() + range.offset, static_cast<size_t>(range.count), ncclAvg,
                            fmt::format("ncclAllReduce of bucket {}", bucket));
        },
        // The bucket's gradient kernels, launched by now, done before NCCL's stream reads them.
        [this](int) { model_->device()->synchronize(); });
    model.set_gradient_ready_hook([this](const Param& param) { pipeline_->gradient_ready(param); });
  }
  summary_ = {{"algorithm", std::string(kNcclTransport)},
              {"nccl_version", NcclCommunicator::version()},
              {"world", nccl_->world()},
              {"bucket_bytes", options_.bucket_bytes},
              {"buckets", pipeline_ != nullptr ? buckets_.size() : size_t{1}},
              {"overlap", pipeline_ != nullptr}};
}

void NcclTransport::synchronize(Model& model, int64_t step, SyncTimes& times) {
  const auto grads = model.device()->device_view(model.arena().grads());
  if (pipeline_ != nullptr) {
    const auto arrival = std::chrono::steady_clock::now();
    spans_.clear();
    for (const BucketTimes& done : pipeline_->wait_all()) {
      const auto bytes = buckets_[static_cast<size_t>(done.bucket)].count * static_cast<int64_t>(sizeof(float));
      spans_.push_back({.what = "ncclAllReduce bucket", .index = done.bucket, .bytes = bytes, .ready = done.ready,
                        .start = done.start, .end = done.end});
      if (done.start < arrival) times.hidden += seconds_between(done.start, std::min(done.end, arrival));
    }
    times.spans = spans_;
  } else {
    nccl_->all_reduce(grads.data(), grads.size(), ncclAvg, fmt::format("ncclAllReduce of step {}", step));
  }
  // What a ring moves per rank (NCCL picks its own algorithm; this is the usual bus-bandwidth count).
  const int world = nccl_->world();
  const auto bytes = static_cast<int64_t>(grads.size() * sizeof(float) * 2 * (world - 1) / std::max(world, 1));
  times.bytes_sent += bytes;
  times.bytes_received += bytes;
}

void NcclTransport::end(Model& model) {
  pipeline_.reset();
  model.set_gradient_ready_hook({});
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
