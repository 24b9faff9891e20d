#include "launch/predict/run_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/util/error.h"
#include "launch/predict/order_statistic.h"
#include "launch/predict/backward_sharing.h"
#include "launch/predict/replay.h"
#include "launch/report/format.h"

namespace dtbench {

namespace {

// A shard's piece of the gradient below which a worker's calls, not its bytes, set its push and
// pull: a gRPC call costs 0.2-0.4 ms on these machines (docs/speed.md), a MiB about 1 ms to move.
constexpr int64_t kBytesSetAShardsTime = int64_t{1} << 20;

std::string workers_text(const std::vector<int>& workers) { return fmt::format("{}", fmt::join(workers, ", ")); }

// What a step of N waits for beyond the mean compute: the slowest of N draws (synchronous), none (async).
double straggler_seconds(const RunFit& fit, int workers) {
  if (!synchronous_transport(fit.transport) || workers <= 1) return 0.0;
  return expected_max_of(fit.compute_samples, workers) - fit.mean_compute_s;
}

// The runs' compute pooled: every sample, and rank 0's phases averaged and scaled to the pooled mean
// (backward's length places the buckets; the phases' sum is the mean compute).
void pool_compute(RunFit& fit, const std::vector<FitRun>& runs) {
  ComputePhases sum;
  for (const FitRun& run : runs) {
    fit.compute_samples.insert(fit.compute_samples.end(), run.compute_samples.begin(), run.compute_samples.end());
    const ComputePhases& c = run.measured.workload.compute;
    sum.load_s += c.load_s, sum.forward_s += c.forward_s, sum.backward_s += c.backward_s;
    sum.update_s += c.update_s, sum.other_s += c.other_s;
  }
  fit.mean_compute_s = std::accumulate(fit.compute_samples.begin(), fit.compute_samples.end(), 0.0) /
                       static_cast<double>(fit.compute_samples.size());
  const double scale = sum.total() > 0 ? fit.mean_compute_s / sum.total() : 0.0;
  fit.workload = runs.front().measured.workload;
  fit.workload.compute = {.load_s = sum.load_s * scale, .forward_s = sum.forward_s * scale,
                          .backward_s = sum.backward_s * scale, .update_s = sum.update_s * scale,
                          .other_s = sum.other_s * scale};
  for (const FitRun& run : runs) {
    if (run.measured.ready_measured) fit.workload.bucket_ready = run.measured.workload.bucket_ready;
  }
  fit.workload.straggler_s = 0;
}

[[noreturn]] void need_two_host_counts(const RunFit& fit, const char* term) {
  fail_input("the fit runs ({}) are all at {} worker(s): one host count cannot fix how {} grows with the workers; "
             "give runs at two host counts at least, or the bench files of that cluster beside them "
             "(--fit LINK:FILE)", fmt::join(fit.fit_runs, ", "), workers_text(fit.fit_workers), term);
}

// Each bucket's time inside training, the last one less the part of the ranks' wait for the slowest
// to arrive that its span holds (its allreduce could not end before that rank's bucket came in;
// fit_runs.h's wait_inside_last_bucket). Where the transport keeps
// several buckets in flight (buckets_in_flight_together), one handed over before the one before it
// completed shares the wire with it, and its span (from that completion to its own) is no time of
// its own: such buckets form one group, timed together from the first one's start to the last
// one's end. Elsewhere every bucket is a group of its own.
struct BucketSample {
  size_t group = 0;
  int index = 0;
  AllreduceSample sample{};
};

std::vector<BucketSample> bucket_samples(const std::vector<FitRun>& runs, bool in_flight_together) {
  std::vector<BucketSample> samples;
  size_t group = 0;
  for (const FitRun& run : runs) {
    std::vector<MeasuredPiece> buckets;
    for (const MeasuredPiece& p : run.pieces) {
      if (p.what == "allreduce bucket") buckets.push_back(p);
    }
    std::sort(buckets.begin(), buckets.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
    for (size_t k = 0; k < buckets.size(); ++k) {
      const MeasuredPiece& p = buckets[k];
      const bool joins = in_flight_together && k > 0 && p.ready_s < buckets[k - 1].end_s;
      if (!joins && !samples.empty()) ++group;
      const double wait = k + 1 == buckets.size() ? run.last_bucket_wait_s : 0.0;
      samples.push_back({.group = group, .index = p.index, .sample = {.bytes = p.bytes, .workers = run.measured.workers,
                                                                       .seconds = std::max(p.seconds() - wait, 1e-9)}});
    }
  }
  return samples;
}

std::vector<std::vector<AllreduceSample>> by_group(const std::vector<BucketSample>& buckets) {
  std::vector<std::vector<AllreduceSample>> groups(buckets.empty() ? 0 : buckets.back().group + 1);
  for (const BucketSample& b : buckets) groups[b.group].push_back(b.sample);
  return groups;
}

// A group's time shared among its buckets as the fitted line shares it (comm_scale included).
void share_group_times(std::vector<BucketSample>& buckets, const NetworkConstants& c) {
  std::vector<double> measured(buckets.empty() ? 0 : buckets.back().group + 1, 0.0), modelled(measured);
  for (const BucketSample& b : buckets) {
    measured[b.group] += b.sample.seconds;
    modelled[b.group] += allreduce_seconds(b.sample.bytes, b.sample.workers, c);
  }
  for (BucketSample& b : buckets) {
    if (modelled[b.group] > 0) {
      b.sample.seconds = measured[b.group] * allreduce_seconds(b.sample.bytes, b.sample.workers, c) / modelled[b.group];
    }
  }
}

// Each bucket's time over the fitted line's (as the model takes it, comm_scale included), pooled
// over the runs: one alpha and beta for every bucket leave a bucket reduced beside backward
// (sharing the cores) and one of the same size after it (alone) off in opposite directions, and
// what they leave would otherwise be read as delays. Empty where a run's buckets are not the workload's.
std::vector<double> fitted_bucket_shape(const std::vector<BucketSample>& samples, const NetworkConstants& c,
                                        size_t buckets) {
  std::vector<double> measured(buckets, 0.0), modelled(buckets, 0.0);
  for (const BucketSample& b : samples) {
    if (b.index < 0 || static_cast<size_t>(b.index) >= buckets) return {};
    measured[static_cast<size_t>(b.index)] += b.sample.seconds;
    modelled[static_cast<size_t>(b.index)] += allreduce_seconds(b.sample.bytes, b.sample.workers, c) * c.comm_scale;
  }
  std::vector<double> shape(buckets);
  for (size_t k = 0; k < buckets; ++k) {
    if (!(modelled[k] > 0) || !(measured[k] > 0)) return {};
    shape[k] = measured[k] / modelled[k];
  }
  return shape;
}

// Where the buckets' times grow with N faster than alpha and beta together can follow (one bucket
// size, a time that more than doubles from 2 to 3 workers: the CPU, not the bytes), the
// schedule's steps alone (the ring's 2(N-1)): alpha by least squares through the origin, no
// bandwidth term.
NetworkConstants latency_only(const std::vector<AllreduceSample>& samples, AllreduceSchedule schedule) {
  double ay = 0, aa = 0;
  for (const AllreduceSample& s : samples) {
    const double steps = allreduce_steps(s.bytes, s.workers, schedule).latencies;
    ay += steps * s.seconds, aa += steps * steps;
  }
  return {.alpha_s = ay / aa, .beta_bytes_per_s = std::numeric_limits<double>::infinity(), .schedule = schedule};
}

// The steps the runs' buckets are counted in: Open MPI's as the benches of the runs' link count
// them (fit_files.cpp: its eager exchanges both ways at once where the link limits), in turn
// without benches of MPI_Allreduce.
AllreduceSchedule runs_schedule(const RunFit& fit, const FittedConstants* benches) {
  if (benches == nullptr || fit.transport != PredictTransport::Mpi || !benches->measured(fit.transport)) {
    return allreduce_schedule(fit.transport);
  }
  return benches->at(fit.transport, parse_link_rate(fit.link)).schedule;
}

void fit_allreduce_terms(RunFit& fit, const std::vector<FitRun>& runs, const FittedConstants* benches) {
  std::vector<BucketSample> buckets = bucket_samples(runs, buckets_in_flight_together(fit.transport));
  std::vector<AllreduceSample> samples;
  for (const BucketSample& b : buckets) samples.push_back(b.sample);
  if (samples.empty()) fail_input("the fit runs ({}) timed no allreduce bucket", fmt::join(fit.fit_runs, ", "));
  const std::vector<std::vector<AllreduceSample>> groups = by_group(buckets);
  const size_t timed_together = static_cast<size_t>(
      std::count_if(groups.begin(), groups.end(), [](const auto& group) { return group.size() > 1; }));
  const std::string together_text =
      timed_together == 0
          ? ""
          : fmt::format(" ({} of them several buckets in flight at once, timed together)", timed_together);
  if (fit.fit_workers.size() > 1) {
    try {
      // summing is inside the runs' times: in beta
      fit.allreduce = fit_allreduce_groups(groups, 0.0, runs_schedule(fit, benches));
      fit.notes.push_back(fmt::format("allreduce: alpha {:.1f} us, beta {:.3f} Gbit/s, least squares on {} bucket "
                                      "time(s) inside training at {} workers{}", 1e6 * fit.allreduce.alpha_s,
                                      8e-9 * fit.allreduce.beta_bytes_per_s, groups.size(),
                                      workers_text(fit.fit_workers), together_text));
    } catch (const InputError& no_line) {
      fit.allreduce = latency_only(samples, runs_schedule(fit, benches));
      fit.notes.push_back(fmt::format("allreduce: alpha {:.1f} us per step and no bandwidth term: no line in bytes "
                                      "follows the buckets' times at {} workers ({})",
                                      1e6 * fit.allreduce.alpha_s, workers_text(fit.fit_workers), no_line.what()));
    }
  } else {
    if (benches == nullptr) need_two_host_counts(fit, "an allreduce");
    NetworkConstants c = benches->at(fit.transport, parse_link_rate(fit.link));
    c.curve.clear(), c.curve_workers = 0;  // the line: the same form at every N
    double run_s = 0, bench_s = 0;
    for (const AllreduceSample& s : samples) run_s += s.seconds, bench_s += allreduce_seconds(s.bytes, s.workers, c);
    c.comm_scale = run_s / bench_s;
    c.comm_scale_workers = fit.fit_workers.front();
    // One host count cannot show how backward slows as more of the allreduce runs beside it; where
    // the hosts' compute fills a quota, the benches' CPU a byte says (docs/predict.md).
    c.backward_sharing = {.host_cores = host_cores_of_every_run(runs), .cpu_s_per_byte = c.cpu_s_per_byte};
    fit.allreduce = c;
    fit.notes.push_back(fmt::format("allreduce: the benches' line x {:.2f}, the buckets' time inside training at {} "
                                    "workers over the bench's{}{}", c.comm_scale, workers_text(fit.fit_workers),
                                    together_text,
                                    open_mpi_schedule(c.schedule)
                                        ? " (Open MPI's: on the same side of two ranks and with the algorithm it "
                                          "took there; else the benches' line)"
                                        : ""));
  }
  if (fit.allreduce.schedule == AllreduceSchedule::OpenMpiTunedLinkBound) {
    fit.notes.push_back("Open MPI's exchanges within its eager limit counted both ways at once: the link limits "
                        "here (the ring's bench reaches most of its rate)");
  }
  fit.allreduce.cpu_s_per_byte = 0;  // the runs' rates hold their CPU already
  fit.allreduce.step_overhead_s = 0, fit.allreduce.straggler_in_comm = false;
  share_group_times(buckets, fit.allreduce);
  fit.allreduce.bucket_shape = fitted_bucket_shape(buckets, fit.allreduce, fit.workload.bucket_bytes.size());
  if (!fit.allreduce.bucket_shape.empty()) {
    fit.notes.push_back(fmt::format("each bucket's time over the line, over the runs: {:.2f}",
                                    fmt::join(fit.allreduce.bucket_shape, ", ")));
  }
  if (fit.allreduce.backward_sharing.host_cores > 0) {
    fit.allreduce.backward_sharing.fit_lost_s = backward_lost_in_runs(fit.allreduce, fit.workload, runs);
    fit.notes.push_back(fmt::format(
        "backward beside the allreduces on hosts of {:g} core: their CPU ({:.2f} ns a byte through the kernel, the "
        "benches' TCP probe, and the summing) taken from the host's, {:.3f} ms a step in the runs",
        fit.allreduce.backward_sharing.host_cores, 1e9 * fit.allreduce.backward_sharing.cpu_s_per_byte / 2,
        1e3 * fit.allreduce.backward_sharing.fit_lost_s));
  }
  // What is left of each run's step once its ranks' compute and the buckets are replayed.
  std::vector<std::pair<int, double>> left;
  for (const FitRun& run : runs) {
    const int n = run.measured.workers;
    const ReplayedSteps replayed = replay_allreduce_steps(fit.workload, fit.compute_samples, n, fit.allreduce);
    left.emplace_back(n, run.step_s - replayed.step_s);
  }
  // Their mean, not a line in N: through two host counts a line would carry whatever the fitted
  // terms left at the larger one (a layout of the emulated hosts, a bucket slower than its line)
  // on to every N, doubled by 4 — held out, the mean missed less for every transport (docs/predict.md).
  fit.overhead = mean_term(left);
  fit.notes.push_back("delays no bucket accounts for: " + fit.overhead.how);
}

// The machine's cores where every run's emulated hosts shared them (workload.h); 0 otherwise.
int cores_every_run_shared(const std::vector<FitRun>& runs) {
  const int shared = runs.front().measured.shared_cores;
  const bool all = std::all_of(runs.begin(), runs.end(), [](const FitRun& r) { return r.measured.shared_cores > 0; });
  return all ? shared : 0;
}

// Every run's hosts promised more cores than the machine has and took turns on them.
bool hosts_took_turns(const std::vector<FitRun>& runs) {
  return std::all_of(runs.begin(), runs.end(), [](const FitRun& r) { return r.measured.hosts_time_sliced; });
}

// A worker's push and pull through runs at two host counts or more. They are a call to each of the
// N shards and the bytes of its gradient. Bytes set the time where every shard's piece is large: on
// a host's own link, and on emulated hosts that each hold a quota the machine can give all of them
// at once, they grow with the (N-1)/N of the gradient that leaves the host. Calls set it where the
// pieces are small, and where the hosts took turns on the machine's cores (promising more than it
// has) every worker's bytes crossed those cores: both grow with N. Held out on the emulated
// cluster, through runs at 2 and 3 half-core hosts, N overshot AlexNet's and ResNet-18's 4 by up
// to 23 % and (N-1)/N undershot LeNet-5's by up to 18 % (docs/predict.md).
TermFit transfer_through_runs(const std::vector<std::pair<int, double>>& transfer, const std::vector<FitRun>& runs,
                              int64_t gradient_bytes) {
  const int shared = cores_every_run_shared(runs);
  const bool time_sliced = shared > 0 && hosts_took_turns(runs);
  // The shards as the runs' server files count them; without them, a shard beside each worker.
  int most_shards = 1;
  for (const FitRun& run : runs) {
    most_shards = std::max(most_shards, run.measured.servers ? run.measured.servers->shards : run.measured.workers);
  }
  const auto in_n = [](int n) { return static_cast<double>(n); };
  if (time_sliced) return fit_term(transfer, in_n, fmt::format("N (the hosts took turns on {} cores)", shared));
  if (gradient_bytes / most_shards < kBytesSetAShardsTime) {
    return fit_term(transfer, in_n, fmt::format("N (a call to each shard: pieces under {} KiB)",
                                                kBytesSetAShardsTime >> 10));
  }
  return fit_term(transfer, [](int n) { return (n - 1.0) / n; },
                  shared > 0 ? "(N-1)/N (each host's quota of the shared cores its own)" : "(N-1)/N");
}

// The rest of the round from runs at one host count (`measured`: its value there, constant). Where
// it is above 0 it is the servers' summing, update and checks of the arriving bytes, gRPC's work
// on them and the waits for it: it grows, as push and pull do, with the bytes a shard's host
// receives and sends, (N-1)/N of the gradient. Held constant, it left AlexNet's and ResNet-18's
// servers at 3 and 4 hosts short at 10 Gbit (ps-async down to -22 %); grown so, every stored pass
// scored as well or better (docs/predict.md). Below 0 it is push and pull hidden under backward,
// which backward's length bounds: it stays.
TermFit rest_from_one_host_count(const TermFit& measured, int workers) {
  if (!(measured.a > 0)) return measured;
  const auto shape = [](int n) { return (n - 1.0) / n; };
  return {.a = 0, .b = measured.a / shape(workers), .shape = shape,
          .how = fmt::format("{:.3f} ms at {} workers, x (N-1)/N over its (N-1)/N there (the bytes a shard's host "
                             "moves)", 1e3 * measured.a, workers)};
}

void fit_server_terms(RunFit& fit, const std::vector<FitRun>& runs, const FittedConstants* benches) {
  std::vector<std::pair<int, double>> transfer, rest;
  for (const FitRun& run : runs) {
    const int n = run.measured.workers;
    const double moved = run.transfer_s;
    transfer.emplace_back(n, moved);
    rest.emplace_back(n, run.step_s - fit.mean_compute_s - straggler_seconds(fit, n) - moved);
  }
  if (fit.fit_workers.size() > 1) {
    fit.transfer = transfer_through_runs(transfer, runs, fit.workload.gradient_bytes);
  } else {
    if (benches == nullptr) need_two_host_counts(fit, "a parameter server's push and pull");
    const NetworkConstants c = benches->at(fit.transport, parse_link_rate(fit.link));
    const int64_t bytes = fit.workload.gradient_bytes;
    // Every worker's bytes through the machine's cores (the benches' model of shared cores,
    // cost_model.h) only where the hosts took turns on them, as through runs at two host counts:
    // hosts that each hold a quota the cores can give all at once carry their own bytes. Through
    // the shared cores, the servers of 3 and 4 hosts at 10 Gbit came out up to 38 % long from 2
    // hosts when judged at the predicted runs' own compute (20 % without them), which the emulated
    // hosts' compute, growing with N, had hidden (docs/predict.md).
    const int shared = hosts_took_turns(runs) ? cores_every_run_shared(runs) : 0;
    const ServerLayout layout{.shared_cores = shared};
    const auto shape = [c, bytes, layout](int n) { return 2 * ps_transfer_seconds(bytes, n, layout, c); };
    const double measured = mean_term(transfer).a;  // the runs' mean: repeats at that host count
    fit.transfer = {.a = 0, .b = measured / shape(fit.fit_workers.front()), .shape = shape,
                    .how = fmt::format("the benches' push + pull scaled to the runs' at {} workers{}",
                                       fit.fit_workers.front(),
                                       shared > 0 ? fmt::format(", every worker's bytes through the {} cores the "
                                                                "hosts took turns on", shared)
                                                  : "")};
  }
  fit.servers = fit_term(rest, [](int n) { return static_cast<double>(n); }, "N");
  if (fit.fit_workers.size() == 1) fit.servers = rest_from_one_host_count(fit.servers, fit.fit_workers.front());
  fit.notes.push_back("push + pull: " + fit.transfer.how);
  fit.notes.push_back("the rest of the round (servers' work and waits, less push and pull under backward): " +
                      fit.servers.how);
}

// MPI_Allreduce is the library's: Open MPI picks its algorithm by the ranks and the size (for large
// buckets Rabenseifner's, which on 3 ranks folds one in and out: 3.2 times our ring's time there,
// 2 on 2 and 4 ranks; docs/predict.md). The fit counts each run's buckets in the steps of the
// algorithm it took (cost_model.h's schedule); the notes say which.
void note_mpi_algorithms(RunFit& fit) {
  for (int n : fit.fit_workers) {
    fit.notes.push_back(fmt::format("mpi at {} ranks: Open MPI's allreduce takes {}", n,
                                    mpi_algorithms_text(fit.workload.bucket_bytes, n)));
  }
}

}  // namespace

TermFit fit_term(const std::vector<std::pair<int, double>>& points, std::function<double(int)> shape,
                 const std::string& shape_text) {
  if (points.empty()) fail_input("a term with no measured point to fit");
  std::set<int> workers;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [n, y] : points) {
    const double x = shape(n);
    workers.insert(n), sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double m = static_cast<double>(points.size());
  if (workers.size() < 2) {
    return {.a = sy / m, .b = 0, .shape = std::move(shape),
            .how = fmt::format("{:.3f} ms, as measured at {} workers", 1e3 * sy / m, *workers.begin())};
  }
  const double b = (m * sxy - sx * sy) / (m * sxx - sx * sx);
  const double a = (sy - b * sx) / m;
  return {.a = a, .b = b, .shape = std::move(shape),
          .how = fmt::format("{:.3f} ms + {:.3f} ms x {}, least squares over {} runs", 1e3 * a, 1e3 * b, shape_text,
                             points.size())};
}

TermFit mean_term(const std::vector<std::pair<int, double>>& points) {
  if (points.empty()) fail_input("a term with no measured point to fit");
  std::set<int> workers;
  double sum = 0;
  for (const auto& [n, y] : points) workers.insert(n), sum += y;
  const double mean = sum / static_cast<double>(points.size());
  // TermFit::at never goes below 0: say so where the mean does, rather than print a delay not used.
  return {.a = mean, .b = 0, .how = fmt::format("{:.3f} ms, the mean over {} run(s) at {} workers{}", 1e3 * mean,
                                                 points.size(), fmt::join(workers, ", "),
                                                 mean < 0 ? " (below 0: taken as none)" : "")};
}

namespace {

// At each host count of the runs: their mean step against the fit's. Every term is fitted on these
// runs, so a miss here is the runs not following the terms' shapes in N (on the emulated cluster:
// hosts laid out on the machine's cores unlike at the other host counts).
void check_on_own_runs(RunFit& fit, const std::vector<FitRun>& runs) {
  for (const int n : fit.fit_workers) {
    double sum = 0;
    int count = 0;
    for (const FitRun& run : runs) {
      if (run.measured.workers == n) sum += run.step_s, ++count;
    }
    if (count > 0 && sum > 0) {
      fit.own_runs.push_back({.workers = n, .measured_s = sum / count, .fitted_s = predict_from_runs(fit, n).step.step_s});
    }
  }
}

}  // namespace

RunFit fit_on_runs(const std::vector<FitRun>& runs, const FittedConstants* benches) {
  if (runs.empty()) fail_input("predict: no run directories to fit on");
  RunFit fit{.model = runs.front().measured.model, .link = runs.front().measured.link};
  std::set<int> workers;
  for (const FitRun& run : runs) {
    fit.fit_runs.push_back(run.measured.dir.string());
    workers.insert(run.measured.workers);
  }
  fit.fit_workers.assign(workers.begin(), workers.end());
  if (fit.fit_workers.front() < 2) {
    fail_input("fit run {} has one worker: it communicates nothing to fit; expected runs of 2 workers or more",
               fit.fit_runs.front());
  }
  try {
    fit.transport = parse_predict_transport(runs.front().measured.transport);
  } catch (const InputError& e) {
    fail_input("fit run {}: {}", fit.fit_runs.front(), e.what());
  }
  pool_compute(fit, runs);
  fit.notes.push_back(fmt::format("compute: {} per-step samples of every rank, mean {:.3f} ms{}",
                                  fit.compute_samples.size(), 1e3 * fit.mean_compute_s,
                                  !synchronous_transport(fit.transport) ? ""
                                  : allreduce_transport(fit.transport)
                                      ? "; a step of N replayed from N draws, each bucket reduced once the last rank "
                                        "has it"
                                      : "; a step waits for the largest of N draws"));
  if (fit.transport == PredictTransport::Mpi) note_mpi_algorithms(fit);
  if (std::any_of(runs.begin(), runs.end(), [](const FitRun& r) { return r.waits_from_compute; })) {
    fit.notes.push_back("each rank's wait for the last rank, which its run did not time: from the ranks' per-step "
                        "compute (in each step the slowest rank's less its own)");
  }
  if (allreduce_transport(fit.transport)) {
    fit_allreduce_terms(fit, runs, benches);
  } else {
    fit_server_terms(fit, runs, benches);
  }
  check_on_own_runs(fit, runs);
  return fit;
}

void divide_compute(RunFit& fit, double speedup) {
  if (!(speedup > 0) || !std::isfinite(speedup)) {
    fail_input("predict: --compute-speedup {}; expected a positive number (2: the workers compute twice as fast)",
               speedup);
  }
  if (speedup == 1) return;
  for (double& sample : fit.compute_samples) sample /= speedup;
  fit.mean_compute_s /= speedup;
  fit.workload.compute.divide_by(speedup);
  fit.compute_speedup *= speedup;
  fit.notes.push_back(fmt::format("compute divided by {:g} (--compute-speedup): mean {:.3f} ms; communication as "
                                  "the runs had it", speedup, 1e3 * fit.mean_compute_s));
}

std::string mpi_algorithms_text(const std::vector<int64_t>& bucket_bytes, int workers) {
  std::vector<std::string> parts;
  for (const OpenMpiChoice& choice : open_mpi_choices(workers, bucket_bytes)) {
    std::vector<std::string> sizes;
    for (int64_t bytes : choice.bucket_bytes) sizes.push_back(bytes_text(static_cast<double>(bytes)));
    parts.push_back(fmt::format("{} ({})", open_mpi_allreduce_name(choice.algorithm), fmt::join(sizes, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

RunFitStep predict_from_runs(const RunFit& fit, int workers) {
  if (workers < 1) fail_input("predict: {} workers; expected at least 1", workers);
  RunFitStep out{.straggler_s = straggler_seconds(fit, workers)};
  if (workers == 1) {
    out.step = {.step_s = fit.mean_compute_s, .compute_s = fit.mean_compute_s};
    return out;
  }
  if (allreduce_transport(fit.transport)) {
    NetworkConstants c = fit.allreduce;
    c.step_overhead_s = fit.overhead.at(workers);
    const ReplayedSteps replayed = replay_allreduce_steps(fit.workload, fit.compute_samples, workers, c);
    out.step = {.step_s = replayed.step_s, .compute_s = replayed.compute_s,
                .comm_exposed_s = replayed.step_s - replayed.compute_s, .comm_total_s = replayed.comm_total_s,
                .bucket_end_s = replayed.bucket_end_s};
    return out;
  }
  // Bucketed pushes run partly under backward, so the rest may take back some of the transfer; a
  // term held at 0 on its own would add back what backward hid (ResNet-18 ps-async: +25 % on the
  // fit's own runs).
  const double transfer = fit.transfer.at(workers);
  const double round = std::max(0.0, transfer + fit.servers.line(workers));
  out.step = {.step_s = fit.mean_compute_s + out.straggler_s + round, .compute_s = fit.mean_compute_s,
              .comm_exposed_s = out.straggler_s + round, .comm_total_s = std::max(round, transfer),
              .staleness = synchronous_transport(fit.transport) ? 0.0 : workers - 1.0};
  return out;
}

}  // namespace dtbench
