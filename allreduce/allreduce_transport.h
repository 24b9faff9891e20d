#pragma once
// The MPI transports (`ring`, `mpi`) behind comm/'s Transport: average the gradient arena across
// the ranks with allreduce(), then run each rank's own optimizer on the identical result.
//
// Gradients go as one fused buffer (the whole arena) or as buckets — contiguous arena ranges of
// about bucket_bytes in reverse layer order (comm/bucket_plan.h). With overlap on, comm/'s bucket
// pipeline reduces each bucket on its thread as soon as backward has finished all its parameters,
// while backward goes on with earlier layers (as PyTorch DDP and Horovod do); the step then only
// waits for what is left ("exposed" comm), and the report shows that beside the total.
//
// The ring takes shared memory when every rank is on one host (shared_ring.h: the same sums in the
// same order, so the weights are bit for bit those of the message ring), unless told otherwise.
//
// Each step the ranks also exchange their arrival times at the synchronisation point, on clocks
// aligned at start-up, which splits comm into wait (this rank waiting for the last to arrive) and
// transfer (moving and reducing bytes), and names the slowest rank. The same alignment places the
// ranks' timelines on rank 0's clock (clock_alignment()), and every bucket's reduction is timed as
// a span for them (SyncTimes::spans).
#include <mpi.h>

#include <chrono>
#include <memory>
#include <utility>

#include "allreduce/allreduce.h"
#include "allreduce/mpi_comm.h"
#include "allreduce/ring_chunk.h"
#include "comm/bucket_pipeline.h"
#include "comm/transport.h"

namespace dtbench {

struct AllreduceTransportOptions {
  AllreduceAlgorithm algorithm = AllreduceAlgorithm::Ring;
  int64_t bucket_bytes = 0;        // 0: one fused buffer
  bool overlap = false;            // reduce buckets during backward; needs bucket_bytes > 0
  int64_t chunk_bytes = 0;         // ring pipelining unit; 0: chosen per path (ring_chunk.h)
  RingPath ring_path = RingPath::Auto;  // ring: shared memory within one host, or messages
  double timeout_seconds = 60.0;   // a peer silent this long ends the run
  bool threads_allowed = true;     // MPI gave us MPI_THREAD_MULTIPLE
  std::function<bool()> stop_requested;
  PeerWatch* peers = nullptr;      // serviced by every wait; names silent ranks on a timeout
  // The watchdog of the blocking MPI_Allreduce ends the job through this (job_failure.h).
  std::function<void(const std::string& reason, int failed_peer)> end_job;
  // Testing the start-up and shut-down deadlines: rank `freeze_rank` stops itself (SIGSTOP) just
  // before the exchange named `freeze_at` ("clock-offset", "ring-chunk" or "weights-checksum").
  int freeze_rank = -1;
  std::string freeze_at;
};

class AllreduceTransport final : public LocalUpdateTransport {
 public:
  AllreduceTransport(OptimizerConfig optimizer, AllreduceTransportOptions options);
  ~AllreduceTransport() override;

  std::string name() const override { return std::string(algorithm_name(options_.algorithm)); }
  nlohmann::json summary() const override { return summary_; }
  std::optional<ClockAlignment> clock_alignment() const override;

 protected:
  void begin(Model& model) override;
  void end(Model& model) override;
  void synchronize(Model& model, int64_t step, SyncTimes& times) override;
  // With overlap, each bucket was copied to the host as backward finished it (on_gradient_ready).
  std::span<float> read_by_synchronize(Model& model) override {
    return pipeline_ != nullptr ? std::span<float>() : model.arena().grads();
  }

 private:
  AllreduceOptions bucket_options(Model& model, const ArenaRange& bucket);
  CommSpan bucket_span(int bucket, std::chrono::steady_clock::time_point ready,
                       std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end) const;
  void estimate_clock_offset();
  // The run's deadline, stop flag and peer watch, waiting for `what`.
  WaitPolicy wait_policy(std::function<std::string()> what) const;
  void freeze_if_asked(const char* where) const;
  double aligned_now() const;
  // On the backward thread, as a bucket becomes ready: a device's gradients to the host.
  void move_bucket_to_host(int bucket);
  // Every rank's arrival at the end of the step; sets the slowest rank and returns its arrival.
  double exchange_arrivals(double arrival, SyncTimes& times);

  AllreduceTransportOptions options_;
  MpiComm comm_;     // gradients
  MpiComm control_;  // arrival times, checksums
  int rank_ = 0;
  int world_ = 1;
  double clock_offset_ = 0.0;           // this rank's clock minus rank 0's, seconds
  double clock_uncertainty_ = 0.0;      // half the round trip the offset was estimated from
  Model* model_ = nullptr;
  double bucket_d2h_seconds_ = 0.0;  // this step's buckets moved to the host as backward made them
  std::vector<ArenaRange> buckets_;
  std::vector<float> scratch_;
  std::unique_ptr<SharedRing> shared_;  // the ring's shared-memory path, when it takes it
  RingChunks chunks_;                   // the ring's chunk of each bucket size, resolved at start
  std::vector<double> arrivals_;        // every rank's arrival time this step, reused
  std::vector<CommSpan> spans_;         // this step's bucket reductions in the order done, one slot per bucket
  std::unique_ptr<Watchdog> watchdog_;  // for the blocking MPI_Allreduce, with MPI_THREAD_MULTIPLE
  // The ring's bytes this step: added by whichever thread runs the buckets, read and reset by the
  // training thread once all of them are done (after the pipeline's wait_all, which orders them).
  AllreduceTraffic traffic_;
  int64_t step_ = 0;
  nlohmann::json summary_;

  // Overlap: backward readies buckets, the pipeline's thread reduces them. Null without overlap.
  std::unique_ptr<BucketPipeline> pipeline_;
};

}  // namespace dtbench
