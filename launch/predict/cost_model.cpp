// The cost model, all of it. S: bytes, N: workers, K: server shards; alpha, beta and the per-byte
// costs come fitted per transport and link rate (fit.cpp), the compute phases from a measured run.
#include "launch/predict/cost_model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "comm/transport_catalogue.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

// PyTorch DDP's name as a blueprint's transport (engine: pytorch).
constexpr std::string_view kDdpTransport = "ddp";

int shard_count(const ServerLayout& layout, int workers) { return layout.shards > 0 ? layout.shards : workers; }

// The largest shard sets the pace: its server's link and cores carry the most.
double largest_share(const ServerLayout& layout, int workers) {
  return layout.largest_share > 0 ? layout.largest_share : 1.0 / shard_count(layout, workers);
}

// When a bucket started at `start`, costing `cost` alone, is done if it goes `stretch` times slower
// while backward runs.
double finish_time(double start, double cost, double backward, double stretch) {
  if (start >= backward) return start + cost;
  if (start + cost * stretch <= backward) return start + cost * stretch;
  return backward + cost - (backward - start) / stretch;
}

// Whether the ratios measured at c.comm_scale_workers (comm_scale, bucket_shape) hold for `bucket`
// at `workers`: always for our ring, whose steps are alike at every N. Open MPI's differ where the
// link limits: between two ranks every exchange runs over one connection, the answers of its
// rendezvous queued behind the data (open_mpi_allreduce.h), and from three on over several, so a
// ratio measured on one side of that says nothing of the other; nor of another algorithm than the
// one it measured. Where the link does not limit (hosts whose CPU is the step: 10 Gbit on the
// emulated cluster) the ratio is the hosts' CPU shared with training, alike at every N: carried
// from 2 ranks, mpi's worst in three passes went from 12.9, 17.1 and 26.2 % to 9.7, 11.7 and
// 9.2 % (docs/predict.md).
bool measured_ratios_hold(const NetworkConstants& c, int64_t bucket, int workers) {
  if (c.comm_scale_workers <= 0 || c.schedule != AllreduceSchedule::OpenMpiTunedLinkBound) return true;
  if ((c.comm_scale_workers == 2) != (workers == 2)) return false;
  const int64_t count = bucket / static_cast<int64_t>(sizeof(float));
  return open_mpi_allreduce_choice(workers, bucket, count) ==
         open_mpi_allreduce_choice(c.comm_scale_workers, bucket, count);
}

// Comm of the allreduce transports: buckets one after another on one communication thread. With
// overlap, bucket k may start once backward has produced it — at the share of backward the run's
// layers put before it (bucket_ready), else backward's time spread over the gradient by bytes —
// and the step waits only for what is left when backward ends. On shared cores backward's threads
// take cores from the allreduce's TCP: 2N busy threads on C cores where the bench had N, so that
// CPU (a rank sends and receives the schedule's wire bytes: 2(N-1)/N of the bucket on a ring) goes
// slower by the ratio until backward ends.
StepPrediction allreduce_step(const Workload& w, int workers, const NetworkConstants& c, int shared_cores) {
  const double n = workers, cores = shared_cores;
  const double slowdown = cores > 0 ? std::max(1.0, 2 * n / cores) / std::max(1.0, n / cores) : 1.0;
  StepPrediction p{.compute_s = w.compute.total()};
  const double backward = w.compute.backward_s;
  double produced = 0, comm_free_at = 0;
  for (size_t k = 0; k < w.bucket_bytes.size(); ++k) {
    const int64_t bucket = w.bucket_bytes[k];
    produced += static_cast<double>(bucket);
    const double share = w.bucket_ready.empty() ? produced / static_cast<double>(w.gradient_bytes) : w.bucket_ready[k];
    const double ready = w.overlap ? backward * share : backward;
    const double cost = bucket_seconds(c, k, bucket, workers);
    const double cpu = std::min(cost, allreduce_steps(bucket, workers, c.schedule).wire_bytes * c.cpu_s_per_byte / 2);
    const double stretch = cost > 0 ? 1 + cpu * (slowdown - 1) / cost : 1.0;
    const double start = std::max(comm_free_at, ready);
    comm_free_at = finish_time(start, cost, backward, stretch);
    p.comm_total_s += comm_free_at - start;
    p.bucket_end_s.push_back(comm_free_at);
  }
  p.comm_exposed_s = std::max(0.0, comm_free_at - backward) + c.step_overhead_s;
  p.comm_total_s += c.step_overhead_s;
  p.step_s = p.compute_s + p.comm_exposed_s;
  return p;
}

// A server's work for one worker's share of its shard: summing it in, and (once per step in sync,
// once per gradient in async) the optimizer step over the shard.
double server_seconds(int64_t bytes, int gradients, double share, const NetworkConstants& c) {
  const double shard_bytes = static_cast<double>(bytes) * share;
  return shard_bytes * (gradients * c.reduce_s_per_byte + c.apply_s_per_byte);
}

// Bytes the largest shard's server link carries in one direction: the other N-1 workers' parts
// when it sits beside a worker, all N on a host of its own — or, for pushes that do not come
// `together` (async), one worker's part at a time.
double largest_server_link_bytes(int64_t bytes, int workers, const ServerLayout& layout, bool together) {
  const double at_once = !together ? 1.0 : layout.beside_workers ? workers - 1 : workers;
  return static_cast<double>(bytes) * largest_share(layout, workers) * at_once;
}

// A size this close beyond the curve's first or last is read as that size: a run's buckets hold
// its parameters padded to alignment, a bench's payload only the parameters (LeNet-5: 58 floats).
constexpr double kCurveEndSlack = 0.01;

// The measured curve's time at `bytes`, log-log between the two sizes around it; -1 outside it.
double on_measured_curve(int64_t bytes, const std::vector<std::pair<int64_t, double>>& curve) {
  if (curve.empty()) return -1.0;
  const auto within = [&](int64_t end) { return std::abs(static_cast<double>(bytes - end)) <= kCurveEndSlack * end; };
  if (bytes < curve.front().first && within(curve.front().first)) return curve.front().second;
  if (bytes > curve.back().first && within(curve.back().first)) return curve.back().second;
  for (size_t k = 1; k < curve.size(); ++k) {
    const auto [low_bytes, low_s] = curve[k - 1];
    const auto [high_bytes, high_s] = curve[k];
    if (bytes < low_bytes || bytes > high_bytes) continue;
    if (high_bytes == low_bytes) return low_s;
    const double f = std::log(static_cast<double>(bytes) / static_cast<double>(low_bytes)) /
                     std::log(static_cast<double>(high_bytes) / static_cast<double>(low_bytes));
    return std::exp(std::log(low_s) + f * (std::log(high_s) - std::log(low_s)));
  }
  return -1.0;
}

// A round (push, the servers' work, pull; sync: for every worker's push) as measured at this N
// with a shard beside each worker, one bench process per host (bench ps --world): on shared cores
// the N(N-1) connections and N servers' threads cost what no one-worker bench shows. -1 where
// nobody measured it.
double measured_ps_round(int64_t bytes, int workers, const ServerLayout& layout, const NetworkConstants& c) {
  if (workers != c.curve_workers || !layout.beside_workers || shard_count(layout, workers) != workers) return -1.0;
  return on_measured_curve(bytes, c.curve);
}

}  // namespace

double allreduce_seconds(int64_t bytes, int workers, const NetworkConstants& c) {
  if (workers <= 1) return 0.0;
  if (workers == c.curve_workers) {
    if (const double measured = on_measured_curve(bytes, c.curve); measured >= 0) return measured;
  }
  const AllreduceSteps steps = allreduce_steps(bytes, workers, c.schedule);
  return steps.latencies * c.alpha_s + steps.wire_bytes / c.beta_bytes_per_s + steps.summed_bytes * c.reduce_s_per_byte;
}

double bucket_seconds(const NetworkConstants& c, size_t k, int64_t bytes, int workers) {
  const bool measured_here = measured_ratios_hold(c, bytes, workers);
  const double shape = measured_here && k < c.bucket_shape.size() ? c.bucket_shape[k] : 1.0;
  return allreduce_seconds(bytes, workers, c) * (measured_here ? c.comm_scale : 1.0) * shape;
}

AllreduceSchedule allreduce_schedule(PredictTransport transport) {
  return transport == PredictTransport::Mpi ? AllreduceSchedule::OpenMpiTuned : AllreduceSchedule::Ring;
}

bool open_mpi_schedule(AllreduceSchedule schedule) { return schedule != AllreduceSchedule::Ring; }

AllreduceSteps allreduce_steps(int64_t bytes, int workers, AllreduceSchedule schedule) {
  const auto s = static_cast<double>(bytes);
  if (schedule == AllreduceSchedule::Ring) return ring_allreduce_steps(workers, s);
  const int64_t floats = bytes / static_cast<int64_t>(sizeof(float));
  const double eager_bytes = schedule == AllreduceSchedule::OpenMpiTunedLinkBound ? kOpenMpiEagerBytes : 0.0;
  return open_mpi_allreduce_steps(open_mpi_allreduce_choice(workers, bytes, floats), workers, s, eager_bytes);
}

double ps_transfer_seconds(int64_t bytes, int workers, const ServerLayout& layout, const NetworkConstants& c,
                           bool together) {
  const int shards = shard_count(layout, workers);
  const double s = static_cast<double>(bytes);
  // A shard beside the worker is reached without crossing its link. Async pushes meet at a server
  // only on average: one worker's part here, every worker's per step is predict_step's bound.
  const double local = layout.beside_workers ? 1.0 / shards : 0.0;
  const double worker_link = s * (1.0 - local);
  const double server_link = largest_server_link_bytes(bytes, workers, layout, together);
  const double wire = std::max(worker_link, server_link) / c.beta_bytes_per_s;
  // Hosts on shared cores (the emulated cluster): TCP's copies of all N workers' bytes, local shard
  // included, on those cores — one way is half the measured round trip, one core's worth per worker.
  const double cpu = layout.shared_cores > 0
                         ? s * c.cpu_s_per_byte / 2 * std::max(1.0, static_cast<double>(workers) / layout.shared_cores)
                         : 0.0;
  return c.alpha_s + std::max(wire, cpu);
}

StepPrediction predict_step(PredictTransport transport, const Workload& w, int workers, const ServerLayout& layout,
                            const NetworkConstants& c) {
  if (workers < 1) fail_input("predict: {} workers; expected at least 1", workers);
  if (workers == 1) return {.step_s = w.compute.total(), .compute_s = w.compute.total()};
  // The formulas go by the family: an allreduce, or parameter servers with or without a barrier.
  if (allreduce_transport(transport)) {
    StepPrediction p = allreduce_step(w, workers, c, layout.shared_cores);
    const double straggler = c.straggler_in_comm ? 0.0 : w.straggler_s;
    p.comm_exposed_s += straggler;  // the allreduce cannot end before the slowest worker joins
    p.step_s += straggler;
    return p;
  }

  StepPrediction p{.compute_s = w.compute.total()};
  const double share = largest_share(layout, workers);
  const bool sync = synchronous_transport(transport);  // the barrier lines the pushes up
  const double transfer = 2 * ps_transfer_seconds(w.gradient_bytes, workers, layout, c, sync);  // push + pull
  const double measured = measured_ps_round(w.gradient_bytes, workers, layout, c);
  if (sync) {
    // The barrier: every worker's push, the slowest's too, is in before the servers sum all N and
    // step once.
    p.comm_total_s = (measured >= 0 ? measured : transfer + server_seconds(w.gradient_bytes, workers, share, c)) *
                     c.comm_scale;
    p.comm_exposed_s = p.comm_total_s + (c.straggler_in_comm ? 0.0 : w.straggler_s);
  } else {
    // No barrier: a worker waits for its own round only, unless the servers' links or cores,
    // which every worker's gradient passes once per step, are the slower.
    p.comm_total_s = (measured >= 0 ? measured : transfer + server_seconds(w.gradient_bytes, 1, share, c)) * c.comm_scale;
    const double server_link =
        largest_server_link_bytes(w.gradient_bytes, workers, layout, /*together=*/true) / c.beta_bytes_per_s;
    const double server_cores = workers * server_seconds(w.gradient_bytes, 1, share, c);
    const double step = std::max({p.compute_s + p.comm_total_s, server_link, server_cores});
    p.comm_exposed_s = step - p.compute_s;
    p.staleness = workers - 1;  // the other workers' updates land while one computes
  }
  p.step_s = p.compute_s + p.comm_exposed_s;
  return p;
}

std::string_view transport_name(PredictTransport transport) {
  switch (transport) {
    case PredictTransport::Ring: return kRingTransport;
    case PredictTransport::Mpi: return kMpiTransport;
    case PredictTransport::PsSync: return kPsSyncTransport;
    case PredictTransport::PsAsync: return kPsAsyncTransport;
    case PredictTransport::Ddp: return kDdpTransport;
  }
  return "?";
}

PredictTransport parse_predict_transport(std::string_view text) {
  for (auto t : kPredictTransports) {
    if (transport_name(t) == text) return t;
  }
  fail_input("unknown transport '{}'; expected ring, mpi, ps-sync, ps-async or ddp", text);
}

// The catalogue's row decides for dtbench's transports; DDP is PyTorch's, not in the catalogue.
bool allreduce_transport(PredictTransport transport) {
  return transport == PredictTransport::Ddp ||
         transport_row(transport_name(transport)).family == TransportFamily::MpiAllreduce;
}

bool buckets_in_flight_together(PredictTransport transport) { return transport == PredictTransport::Ddp; }

bool synchronous_transport(PredictTransport transport) {
  return transport == PredictTransport::Ddp || transport_row(transport_name(transport)).synchronous;
}

}  // namespace dtbench
