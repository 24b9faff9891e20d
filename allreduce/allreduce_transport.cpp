#include "allreduce/allreduce_transport.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>
#include <utility>

#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "allreduce/mpi_check.h"
#include "allreduce/mpi_info.h"
#include "allreduce/mpi_session.h"
#include "allreduce/ring_chunk.h"
#include "core/device/device.h"
#include "core/util/clock.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

double monotonic_seconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

}  // namespace

AllreduceTransport::AllreduceTransport(OptimizerConfig optimizer, AllreduceTransportOptions options)
    : LocalUpdateTransport(std::move(optimizer)), options_(std::move(options)) {
  if (options_.overlap && options_.bucket_bytes <= 0) {
    fail_input("comm.overlap needs buckets: set comm.bucket_mb > 0 (overlap reduces bucket by bucket)");
  }
  if (options_.chunk_bytes < 0) {
    fail_input("comm.chunk_kb must be >= 0 (0: chosen per path), got {} bytes", options_.chunk_bytes);
  }
}

AllreduceTransport::~AllreduceTransport() {
  pipeline_.reset();  // its thread may be reducing a bucket through this transport's members
  if (model_ != nullptr) model_->set_gradient_ready_hook({});
}

void AllreduceTransport::begin(Model& model) {
  model_ = &model;
  comm_ = duplicate_communicator(MPI_COMM_WORLD, wait_policy({}), "gradients");
  control_ = duplicate_communicator(MPI_COMM_WORLD, wait_policy({}), "arrival times and checksums");
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &world_);

  // Rank 0's initial weights and buffers (batch norm statistics) for everyone.
  ParamArena& arena = model.arena();
  std::vector<MPI_Request> requests(1 + model.buffers().size(), MPI_REQUEST_NULL);
  check_mpi(MPI_Ibcast(arena.values().data(), static_cast<int>(arena.count()), MPI_FLOAT, 0, comm_, &requests[0]),
            "MPI_Ibcast");
  for (size_t i = 0; i < model.buffers().size(); ++i) {
    Tensor* buffer = model.buffers()[i];
    check_mpi(MPI_Ibcast(buffer->data(), static_cast<int>(buffer->numel()), MPI_FLOAT, 0, comm_, &requests[i + 1]),
              "MPI_Ibcast");
  }
  wait_all(requests, wait_policy([] { return std::string("broadcast of rank 0's initial weights"); }));
  estimate_clock_offset();
  if (options_.algorithm == AllreduceAlgorithm::Mpi && options_.threads_allowed) {
    watchdog_ = std::make_unique<Watchdog>(WatchdogHooks{
        .stop_requested = options_.stop_requested,
        .peers = options_.peers,
        .end_job = options_.end_job});
  }

  BucketPlan plan = BucketPlan::contiguous(arena, options_.bucket_bytes);
  buckets_ = plan.ranges();
  spans_.assign(buckets_.size(), CommSpan{});
  std::vector<int64_t> bucket_bytes;
  for (const ArenaRange& bucket : buckets_) bucket_bytes.push_back(bucket.count * static_cast<int64_t>(sizeof(float)));
  if (options_.algorithm == AllreduceAlgorithm::Ring) {
    const int64_t slot = options_.chunk_bytes > 0 ? options_.chunk_bytes : kSharedMemoryChunkBytes;
    shared_ = SharedRing::open(options_.ring_path, comm_, slot, wait_policy({}));
    freeze_if_asked("ring-chunk");
    chunks_ = resolve_ring_chunks(options_.chunk_bytes, shared_ != nullptr, comm_,
                                  wait_policy([] { return std::string("choosing the ring's chunk"); }), bucket_bytes);
  }
  const bool overlap = options_.overlap && world_ > 1;
  if (options_.overlap && !options_.threads_allowed) {
    spdlog::warn("MPI gave no MPI_THREAD_MULTIPLE: gradients are reduced after backward, without overlap");
  } else if (overlap) {
    BucketPipeline::Handler prepare;
    if (model.device() != nullptr) prepare = [this](int bucket) { move_bucket_to_host(bucket); };
    pipeline_ = std::make_unique<BucketPipeline>(
        std::move(plan),
        [this](int bucket) { allreduce(bucket_options(*model_, buckets_[static_cast<size_t>(bucket)])); },
        std::move(prepare));
    model.set_gradient_ready_hook([this](const Param& param) { pipeline_->gradient_ready(param); });
  }
  summary_ = {{"algorithm", name()},
              {"world", world_},
              {"buckets", buckets_.size()},
              {"bucket_bytes", options_.bucket_bytes},
              {"overlap", pipeline_ != nullptr},
              {"chunk_bytes",
               options_.algorithm == AllreduceAlgorithm::Ring ? nlohmann::json(chunks_.rule().bytes) : "-"},
              {"chunk_source", options_.algorithm == AllreduceAlgorithm::Ring ? chunks_.rule().source : "-"},
              {"chunk_timing", chunks_.timings_json()},
              {"ring_path", options_.algorithm != AllreduceAlgorithm::Ring ? "-"
                            : shared_ ? "shared memory" : "messages"},
              {"timeout_seconds", options_.timeout_seconds},
              {"clock_offset_seconds", clock_offset_},
              {"clock_uncertainty_seconds", clock_uncertainty_},
              {"bytes_counted", options_.algorithm == AllreduceAlgorithm::Ring
                                    ? (shared_ ? "read by the peers out of this rank's shared-memory slot (sent) and "
                                                 "by this rank out of theirs (received), as the message ring would "
                                                 "send and receive them"
                                               : "sent and received by the ring, counted as it posts them")
                                    : "algorithmic volume 2·K·(N−1)/N per rank each way, a ring's (what "
                                      "MPI_Allreduce's own algorithm sends is not seen; mpi_algorithm says "
                                      "which it is)"}};
  if (options_.algorithm == AllreduceAlgorithm::Mpi) {
    summary_["mpi_algorithm"] = mpi_allreduce_algorithms(world_, bucket_bytes);
  }
}

CommSpan AllreduceTransport::bucket_span(int bucket, Clock::time_point ready, Clock::time_point start,
                                         Clock::time_point end) const {
  const auto bytes = buckets_[static_cast<size_t>(bucket)].count * static_cast<int64_t>(sizeof(float));
  return {.what = "allreduce bucket", .index = bucket, .bytes = bytes, .ready = ready, .start = start, .end = end};
}

AllreduceOptions AllreduceTransport::bucket_options(Model& model, const ArenaRange& bucket) {
  AllreduceOptions o;
  o.buffer = model.arena().grads().data() + bucket.offset;
  o.count = bucket.count;
  o.comm = comm_;
  o.algorithm = options_.algorithm;
  o.chunk_bytes = chunks_.bytes_for(bucket.count * static_cast<int64_t>(sizeof(float)));
  o.scratch = &scratch_;
  o.watchdog = watchdog_.get();
  o.traffic = &traffic_;
  o.shared = shared_.get();
  o.wait = wait_policy([this] {
    return fmt::format("rank {} at step {}; every rank had completed step {}", rank_, step_, step_ - 1);
  });
  // After backward, on the training thread, with a core per rank: nothing else needs the core.
  if (pipeline_ == nullptr && shared_ && world_ <= static_cast<int>(std::thread::hardware_concurrency())) {
    o.wait.spin_seconds = 0.01;
  }
  return o;
}

WaitPolicy AllreduceTransport::wait_policy(std::function<std::string()> what) const {
  return {.timeout_seconds = options_.timeout_seconds,
          .stop_requested = options_.stop_requested,
          .describe = std::move(what),
          .peers = options_.peers};
}

void AllreduceTransport::freeze_if_asked(const char* where) const {
  if (options_.freeze_rank != rank_ || options_.freeze_at != where) return;
  spdlog::warn("rank {}: freezing before the {} exchange, as the test asked", rank_, where);
  raise(SIGSTOP);
}

// Cristian's algorithm against rank 0: of several ping-pongs, the one with the shortest round trip
// bounds the offset best (to within half that round trip). On one host the clocks agree already
// and the offset comes out ~0. Every message is waited on with the run's deadline: a rank that
// stalls here fails the others at start-up instead of holding them for ever.
void AllreduceTransport::estimate_clock_offset() {
  freeze_if_asked("clock-offset");
  constexpr int kRounds = 8;
  // Per rank: {offset, half the best round trip}.
  std::vector<double> estimates(2 * static_cast<size_t>(world_), 0.0);
  for (int peer = 1; peer < world_; ++peer) {
    CristianEstimate estimate;  // at rank 0: the peer's clock minus ours, i.e. the peer's offset
    const int other = rank_ == 0 ? peer : 0;
    const WaitPolicy wait = wait_policy([this, other] {
      return fmt::format("rank {} at start-up: clock-offset exchange with rank {}", rank_, other);
    });
    for (int round = 0; round < kRounds && (rank_ == 0 || rank_ == peer); ++round) {
      double sent = 0.0, received = 0.0;
      MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      const PendingRequests pending(requests);
      if (rank_ == 0) sent = monotonic_seconds();
      check_mpi(MPI_Irecv(&received, 1, MPI_DOUBLE, other, 1, control_, &requests[0]), "MPI_Irecv");
      if (rank_ == 0) {
        check_mpi(MPI_Isend(&sent, 1, MPI_DOUBLE, other, 1, control_, &requests[1]), "MPI_Isend");
        wait_all(requests, wait);
        estimate.add_probe(sent, received, monotonic_seconds());
      } else {
        wait_all({requests, 1}, wait);
        sent = monotonic_seconds();
        check_mpi(MPI_Isend(&sent, 1, MPI_DOUBLE, other, 1, control_, &requests[1]), "MPI_Isend");
        wait_all({requests + 1, 1}, wait);
      }
    }
    estimates[2 * static_cast<size_t>(peer)] = estimate.remote_minus_ours();
    estimates[2 * static_cast<size_t>(peer) + 1] = estimate.uncertainty();
  }
  double own[2] = {0.0, 0.0};
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iscatter(estimates.data(), 2, MPI_DOUBLE, own, 2, MPI_DOUBLE, 0, control_, &request), "MPI_Iscatter");
  wait_all({&request, 1}, wait_policy([this] {
             return fmt::format("rank {} at start-up: scattering the clock offsets from rank 0", rank_);
           }));
  clock_offset_ = own[0];
  clock_uncertainty_ = own[1];
}

std::optional<ClockAlignment> AllreduceTransport::clock_alignment() const {
  return ClockAlignment{.reference = "rank 0 steady clock",
                        .offset_seconds = clock_offset_,
                        .uncertainty_seconds = clock_uncertainty_,
                        .method = rank_ == 0 ? "the reference itself"
                                             : "Cristian's algorithm over MPI: best of 8 round trips to rank 0"};
}

double AllreduceTransport::aligned_now() const { return monotonic_seconds() - clock_offset_; }

void AllreduceTransport::move_bucket_to_host(int bucket) {
  // The pipeline's thread reads the bucket on the host.
  const ArenaRange& range = buckets_[static_cast<size_t>(bucket)];
  const auto start = Clock::now();
  model_->device()->move_to_host(
      model_->arena().grads().subspan(static_cast<size_t>(range.offset), static_cast<size_t>(range.count)));
  bucket_d2h_seconds_ += seconds_since(start);
}

void AllreduceTransport::synchronize(Model& model, int64_t step, SyncTimes& times) {
  step_ = step;
  const auto arrival_clock = Clock::now();
  const double arrival = aligned_now();
  if (pipeline_ != nullptr) {
    // spans_ in the order the buckets were done, written out before the next backward.
    const std::span<const BucketTimes> done = pipeline_->wait_all();
    for (size_t i = 0; i < done.size(); ++i) {
      spans_[i] = bucket_span(done[i].bucket, done[i].ready, done[i].start, done[i].end);
    }
  } else {
    for (size_t b = 0; b < buckets_.size(); ++b) {
      const auto start = Clock::now();
      allreduce(bucket_options(model, buckets_[b]));
      spans_[b] = bucket_span(static_cast<int>(b), arrival_clock, start, Clock::now());
    }
  }
  times.spans = spans_;
  times.d2h += std::exchange(bucket_d2h_seconds_, 0.0);  // buckets moved to the host during backward
  if (options_.algorithm == AllreduceAlgorithm::Ring) {
    // What the ring's steps posted, counted by the ring itself (every bucket is done by now).
    times.bytes_sent = traffic_.bytes_sent;
    times.bytes_received = traffic_.bytes_received;
    traffic_ = {};
  } else {
    // MPI_Allreduce's algorithm is Open MPI's choice: the algorithmic volume of a ring,
    // 2·K·(N−1)/N bytes each way per rank, labelled as such in the transport's summary.
    const auto bytes = static_cast<int64_t>(2.0 * static_cast<double>(model.arena().count()) * sizeof(float) *
                                            (world_ - 1) / world_);
    times.bytes_sent = bytes;
    times.bytes_received = bytes;
  }
  const double last_arrival = exchange_arrivals(arrival, times);
  // What the buckets did while backward still ran; the rest, from this rank's arrival on, is the
  // exposed time (the arrival exchange included: it too waits for the slowest rank).
  for (const CommSpan& span : spans_) {
    if (span.start < arrival_clock) times.hidden += seconds_between(span.start, std::min(span.end, arrival_clock));
  }
  times.wait = std::max(last_arrival - arrival, 0.0);
}

double AllreduceTransport::exchange_arrivals(double arrival, SyncTimes& times) {
  std::vector<double>& arrivals = arrivals_;
  arrivals.resize(static_cast<size_t>(world_));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&arrival, 1, MPI_DOUBLE, arrivals.data(), 1, MPI_DOUBLE, control_, &request),
            "MPI_Iallgather");
  wait_all({&request, 1}, wait_policy([this] {
             return fmt::format("rank {}: exchange of arrival times after step {}", rank_, step_);
           }));
  const auto last = std::max_element(arrivals.begin(), arrivals.end());
  times.slowest_rank = static_cast<int>(last - arrivals.begin());
  return *last;
}

void AllreduceTransport::end(Model& model) {
  freeze_if_asked("weights-checksum");
  const uint64_t local = weights_checksum(model.arena().values());
  std::vector<uint64_t> all(static_cast<size_t>(world_));
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Iallgather(&local, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, control_, &request),
            "MPI_Iallgather");
  wait_all({&request, 1}, wait_policy([this] {
             return fmt::format("rank {} at shut-down: gathering every rank's weights checksum", rank_);
           }));
  if (shared_) {
    shared_->release(wait_policy([this] { return fmt::format("rank {} at shut-down", rank_); }));
    shared_.reset();
  }
  std::vector<int> differing;
  for (int r = 0; r < world_; ++r) {
    if (all[static_cast<size_t>(r)] != all[0]) differing.push_back(r);
  }
  summary_["weights_identical"] = differing.empty();
  summary_["weights_checksum"] = fmt::format("{:016x}", local);
  if (!differing.empty()) {
    summary_["ranks_differing_from_rank_0"] = differing;
    spdlog::error("rank {}: the weights differ across ranks after training (ranks {} differ from rank 0)", rank_,
                  fmt::join(differing, ", "));
  }
}

}  // namespace dtbench
