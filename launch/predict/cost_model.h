#pragma once
// The cost of one training step per transport, as a function of the workers N, from constants
// fitted on measurements (fit.h) and the compute phases of a measured run (workload.h). The whole
// model is cost_model.cpp, one screen; docs/predict.md states its assumptions.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/open_mpi_allreduce.h"

namespace dtbench {

// dtbench's four transports, and PyTorch DDP (engine: pytorch), whose gloo allreduce is a ring
// over TCP too: its runs fit and are predicted as the ring's are.
enum class PredictTransport { Ring, Mpi, PsSync, PsAsync, Ddp };
inline constexpr PredictTransport kPredictTransports[] = {PredictTransport::Ring, PredictTransport::Mpi,
                                                          PredictTransport::PsSync, PredictTransport::PsAsync,
                                                          PredictTransport::Ddp};

// Whose allreduce a transport's constants time: our ring's 2(N-1) steps at every size, or
// MPI_Allreduce, whose algorithm Open MPI picks by the ranks and the size
// (comm/open_mpi_allreduce.h) — a fit across rank counts must count each one's own steps. Open MPI's
// come in two counts: every exchange between two ranks one direction after the other, or, where the
// link and not the hosts' CPU limits, those of messages within its eager limit both ways at once
// (an eager message waits for no acknowledgement; where the CPU limits, it copies both directions
// either way). allreduce_schedule gives the first; FittedConstants picks (fit.h).
enum class AllreduceSchedule { Ring, OpenMpiTuned, OpenMpiTunedLinkBound };
AllreduceSchedule allreduce_schedule(PredictTransport transport);
bool open_mpi_schedule(AllreduceSchedule schedule);

std::string_view transport_name(PredictTransport transport);
// The catalogue's names of the four (comm/transport_catalogue.h) and "ddp"; InputError naming `text` otherwise.
PredictTransport parse_predict_transport(std::string_view text);
// Whether a step of `transport` is an allreduce of buckets (else parameter servers), and whether it
// waits for every worker.
bool allreduce_transport(PredictTransport transport);
bool synchronous_transport(PredictTransport transport);
// Whether the transport may keep several buckets in flight at once (DDP: gloo runs a process
// group's collectives on two threads), so that a bucket handed over before the one before it
// completed shares the wire with it, and its span holds the other's bytes. The fit times such
// buckets together (run_fit.h); the model's buckets, one after another, stand for them: the same
// bytes through the same links end when they end.
bool buckets_in_flight_together(PredictTransport transport);

// One transport's constants at one link rate.
struct NetworkConstants {
  double alpha_s = 0.0;            // latency per message (allreduce: per ring step; ps: per push or pull)
  double beta_bytes_per_s = 0.0;   // bytes per second one worker's link carries each way
  double reduce_s_per_byte = 0.0;  // allreduce: summing a received byte; ps: a server summing a byte of one worker
  double apply_s_per_byte = 0.0;   // ps: the server's optimizer step per byte of its shard
  double cpu_s_per_byte = 0.0;     // a byte sent and echoed back over TCP, CPU alone (no link); 0: unknown
  AllreduceSchedule schedule = AllreduceSchedule::Ring;  // allreduce: the steps alpha and beta are counted in
  // At a link that was measured: the median time of each size measured there with `curve_workers`
  // ranks, by size — allreduce: one allreduce; parameter servers: one round of the transport's
  // mode, push + wait + pull, with one bench process per host beside a shard. Between two of its
  // sizes the model reads the time off it instead of the fitted line: alpha + S/beta is one
  // straight line through a curve that bends (the library switching algorithms at a size, a link
  // at full rate for a small message and half for a large one, N servers and their connections on
  // shared cores).
  std::vector<std::pair<int64_t, double>> curve{};
  int curve_workers = 0;
  // The run's own communication per step over what these constants give at its workers and link
  // (run_check.h): the bench's rate against the rate inside training. 1: the bench alone.
  double comm_scale = 1.0;
  // The workers comm_scale and bucket_shape were measured at; 0: they hold at every N. Under Open
  // MPI's schedule where the link limits they hold only on the same side of two ranks and where it
  // takes the algorithm it took there (cost_model.cpp): fitted on 2 ranks and carried on, mpi at 3
  // and 4 came out 8-12 % short at 1 Gbit in two passes of the validation, the benches alone within
  // 2 % (docs/predict.md).
  int comm_scale_workers = 0;
  // Allreduce, calibrated: each bucket's own ratio to the bench in the run, relative to comm_scale
  // (a bucket reduced beside backward and one after it need not run alike). Empty: 1 each.
  std::vector<double> bucket_shape{};
  // Allreduce, calibrated: what the run's steps spent in comm that no bucket's time accounts for —
  // a ready bucket waiting for the communication thread, and the step's end after the last
  // bucket (the arrival times exchanged). 0: none.
  double step_overhead_s = 0.0;
  // Calibrated: the run's pieces already hold its waits for the slowest worker, where they fell
  // (hidden under backward or not), so the workload's straggler_s is not added again.
  bool straggler_in_comm = false;
  // Replayed allreduce steps on hosts of a CPU quota that their compute fills (emulated hosts of
  // a fraction of a core): an allreduce in flight beside backward takes its CPU — its bytes through
  // the kernel (cpu_s_per_byte) and their summing — out of the host's, and backward loses as much
  // of its time as that is of the quota's, over what it lost in the fit's runs (their mean per
  // step: backward as measured holds it). 0 cores: backward keeps its time (hosts with cores to spare).
  struct BackwardSharing {
    double host_cores = 0.0;
    double cpu_s_per_byte = 0.0;  // as cpu_s_per_byte: a byte sent and echoed back over TCP
    double fit_lost_s = 0.0;
  } backward_sharing{};
  std::string source{};            // the measured inputs these came from
};

// Seconds per step of the phases that are not communication, as measured.
struct ComputePhases {
  double load_s = 0.0, forward_s = 0.0, backward_s = 0.0, update_s = 0.0, other_s = 0.0;
  double total() const { return load_s + forward_s + backward_s + update_s + other_s; }
  // Every phase divided by `speedup` (workers that compute that many times as fast).
  void divide_by(double speedup) {
    for (double* phase : {&load_s, &forward_s, &backward_s, &update_s, &other_s}) *phase /= speedup;
  }
};

struct Workload {
  ComputePhases compute{};
  std::vector<int64_t> bucket_bytes{};  // allreduce buckets in the order backward completes them
  std::vector<double> bucket_ready{};   // share of backward done when each is complete; empty: by bytes
  bool overlap = false;               // buckets reduced during backward (comm.overlap)
  int64_t gradient_bytes = 0;         // the whole gradient: what a ps worker pushes and pulls
  double straggler_s = 0.0;  // the run's slowest worker's compute less this one's: what a synchronous step waits
};

// Where the parameter servers are: `shards` of them, each beside a worker (one per host, the
// study's layout) or on hosts of their own. shards 0: one per worker. And whether all hosts share
// one machine's cores (the emulated cluster), which every transport's CPU then competes for.
struct ServerLayout {
  int shards = 0;
  bool beside_workers = true;
  double largest_share = 0.0;  // of the parameters on the largest shard, as measured; 0: even, 1/K
  int shared_cores = 0;        // all hosts share this many cores (the emulated cluster); 0: each host its own
};

struct StepPrediction {
  double step_s = 0.0;
  double compute_s = 0.0;
  double comm_exposed_s = 0.0;  // what the step waits for (step = compute + exposed)
  double comm_total_s = 0.0;    // including what overlapped backward
  double staleness = 0.0;       // async: expected versions a gradient is behind
  std::vector<double> bucket_end_s{};  // allreduce: when each bucket is done, from backward's start
};

// One allreduce of `bytes` across `workers`: the schedule's steps (ring: 2(N-1) steps of alpha +
// (S/N)/beta, plus reducing (N-1)/N of the bytes) — or, for the workers and within the sizes of the
// measured curve, the measured time (log-log between its two nearest sizes).
double allreduce_seconds(int64_t bytes, int workers, const NetworkConstants& c);
// Bucket k's allreduce of `bytes` across `workers` as the model takes it: allreduce_seconds, carried
// by comm_scale and the bucket's shape where the ratios measured at comm_scale_workers hold there.
double bucket_seconds(const NetworkConstants& c, size_t k, int64_t bytes, int workers);
// The steps of one allreduce of float32 `bytes` across `workers` under `schedule`.
AllreduceSteps allreduce_steps(int64_t bytes, int workers, AllreduceSchedule schedule);

// Push (or pull) of one worker's `bytes` spread over the shards, given the layout: each worker's
// link carries its own bytes, each server's link those of every worker when they come `together`
// (incast: the sync barrier lines them up), else one worker's part. Where the hosts share cores,
// no faster than those cores can move every worker's bytes through TCP.
double ps_transfer_seconds(int64_t bytes, int workers, const ServerLayout& layout, const NetworkConstants& c,
                           bool together = true);

// One step of `transport` for `workers` workers. N = 1 is one worker training alone: compute only.
// The synchronous transports (ring, mpi, ps-sync) wait for the slowest worker as measured: their
// exposed comm holds straggler_s.
StepPrediction predict_step(PredictTransport transport, const Workload& workload, int workers,
                            const ServerLayout& layout, const NetworkConstants& c);

}  // namespace dtbench
