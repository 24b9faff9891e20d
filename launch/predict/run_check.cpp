#include "launch/predict/run_check.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

namespace {

std::optional<PredictTransport> known_transport(const std::string& name) {
  for (auto t : kPredictTransports) {
    if (transport_name(t) == name) return t;
  }
  return std::nullopt;
}

// What the run's communication took per step: the time any of its pieces ran, so that pieces that
// ran at once (the parameter servers' shards, each pushed as soon as backward finished it) count
// once; its waits for the slowest worker included where they fell (calibrated, the model adds no
// straggler of its own).
double run_comm_total(const MeasuredRun& run) {
  std::vector<std::pair<double, double>> spans;
  for (const MeasuredPiece& p : run.comm_pieces) spans.emplace_back(p.start_s, p.end_s);
  std::sort(spans.begin(), spans.end());
  double total = 0, covered = -std::numeric_limits<double>::infinity();
  for (const auto& [start, end] : spans) {
    if (end > std::max(start, covered)) total += end - std::max(start, covered);
    covered = std::max(covered, end);
  }
  return total;
}

// The scale on the constants' communication that makes the model's comm per step the run's. The
// model is not linear in it (on shared cores an allreduce overlapping backward stretches, the more
// of it the longer backward's share), so each pass corrects the last until they agree to 0.1 %
// (a bucket of AlexNet's reduced beside backward under DDP took five passes to come within 1 %).
double fitted_comm_scale(const MeasuredRun& run, PredictTransport transport, NetworkConstants c,
                         const ServerLayout& layout, double target) {
  constexpr int kMostPasses = 12;
  double scale = 1.0;
  for (int pass = 0; pass < kMostPasses; ++pass) {
    c.comm_scale = scale;
    // The buckets' (or the round's) time alone: the overhead is the run's as it was.
    const double predicted = predict_step(transport, run.workload, run.workers, layout, c).comm_total_s - c.step_overhead_s;
    if (!(predicted > 0)) return 1.0;
    scale *= target / predicted;
    if (std::abs(target / predicted - 1) < 1e-3) break;
  }
  return scale;
}

// The run's allreduce buckets in index order.
std::vector<const MeasuredPiece*> buckets_by_index(const MeasuredRun& run) {
  std::vector<const MeasuredPiece*> out;
  for (const MeasuredPiece& piece : run.comm_pieces) {
    if (piece.what == "allreduce bucket") out.push_back(&piece);
  }
  std::stable_sort(out.begin(), out.end(), [](const MeasuredPiece* a, const MeasuredPiece* b) { return a->index < b->index; });
  return out;
}

// The run's buckets in index order; empty unless they are the workload's: bucket k at place k, of
// its bytes.
std::vector<const MeasuredPiece*> run_buckets(const MeasuredRun& run) {
  std::vector<const MeasuredPiece*> out = buckets_by_index(run);
  const std::vector<int64_t>& buckets = run.workload.bucket_bytes;
  if (out.size() != buckets.size()) return {};
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k]->index != static_cast<int>(k) || out[k]->bytes != buckets[k]) return {};
  }
  return out;
}

// Whether bucket k of `buckets` (index order) was in flight with the one before it: where the
// transport keeps several buckets in flight (DDP: gloo runs two collectives at once), a bucket
// whose span starts before the one before it completed (or has no length: it completed inside
// another's span) shares the wire with it, and its span is no time of its own.
bool joins_previous(const std::vector<const MeasuredPiece*>& buckets, size_t k, double previous_end, bool together) {
  return together && k > 0 && (buckets[k]->start_s < previous_end || !(buckets[k]->seconds() > 0));
}

// A bucket's own time in the run, and whether it shared its span with others in flight at once.
struct BucketTime {
  double seconds = 0.0;
  bool with_others = false;
};

// Each bucket's own time in the run: its span, or where buckets were in flight together, the
// group's span (first start to last end) shared among them as the bench's line shares it (as the
// fit on runs times them: run_fit.cpp). Empty when the run's buckets are not the workload's.
std::vector<BucketTime> bucket_times(const MeasuredRun& run, const NetworkConstants& bench, bool together) {
  const std::vector<const MeasuredPiece*> buckets = run_buckets(run);
  std::vector<BucketTime> times(buckets.size());
  size_t first = 0;
  double group_start = 0, group_end = 0;
  const auto close_group = [&](size_t end) {
    double line = 0;
    for (size_t k = first; k < end; ++k) line += allreduce_seconds(buckets[k]->bytes, run.workers, bench);
    for (size_t k = first; k < end; ++k) {
      const double share = allreduce_seconds(buckets[k]->bytes, run.workers, bench);
      times[k] = {.seconds = line > 0 ? (group_end - group_start) * share / line : 0.0, .with_others = end - first > 1};
    }
  };
  for (size_t k = 0; k < buckets.size(); ++k) {
    if (joins_previous(buckets, k, group_end, together)) {
      group_end = std::max(group_end, buckets[k]->end_s);
      continue;
    }
    if (k > 0) close_group(k);
    first = k;
    group_start = buckets[k]->start_s;
    group_end = buckets[k]->end_s;
  }
  if (!buckets.empty()) close_group(buckets.size());
  return times;
}

// Each bucket's time in the run over the bench's, relative to all buckets' together; empty when
// the run's buckets are not the model's.
std::vector<double> bucket_shape(const MeasuredRun& run, const NetworkConstants& bench, bool together) {
  const std::vector<BucketTime> times = bucket_times(run, bench, together);
  std::vector<double> ratio(times.size());
  double run_total = 0, bench_total = 0;
  for (size_t k = 0; k < times.size(); ++k) {
    const double at_bench = allreduce_seconds(run.workload.bucket_bytes[k], run.workers, bench);
    if (!(at_bench > 0) || !(times[k].seconds > 0)) return {};
    ratio[k] = times[k].seconds / at_bench;
    run_total += times[k].seconds;
    bench_total += at_bench;
  }
  for (double& r : ratio) r /= run_total / bench_total;
  return ratio;
}

// The run's comm per step that no bucket's time accounts for: buckets ready but not started (the
// model starts one once it is ready and the one before it is done; any later is the communication
// thread not running, on a busy core), and the step's end after its last bucket.
struct AllreduceOverhead {
  double idle_s = 0.0, after_last_s = 0.0;
  double total() const { return idle_s + after_last_s; }
};

AllreduceOverhead allreduce_overhead(const MeasuredRun& run, bool together) {
  AllreduceOverhead o;
  const std::vector<const MeasuredPiece*> buckets = buckets_by_index(run);
  double previous_end = 0;
  for (size_t k = 0; k < buckets.size(); ++k) {
    if (!joins_previous(buckets, k, previous_end, together)) {
      o.idle_s += std::max(0.0, buckets[k]->start_s - std::max(buckets[k]->ready_s, previous_end));
    }
    previous_end = std::max(previous_end, buckets[k]->end_s);
  }
  o.after_last_s = std::max(0.0, run.measured_comm_s - std::max(0.0, previous_end - run.workload.compute.backward_s));
  return o;
}

void add_allreduce_terms(RunCheck& check, const MeasuredRun& run, const NetworkConstants& bench, bool together) {
  const Workload& w = run.workload;
  // A bucket in flight with others: its share of their span (its own span is none of its time).
  const std::vector<BucketTime> own = bucket_times(run, bench, together);
  for (const MeasuredPiece& piece : run.comm_pieces) {
    const auto k = static_cast<size_t>(piece.index);
    if (piece.what != "allreduce bucket" || piece.index < 0 || k >= w.bucket_bytes.size()) continue;
    const bool shared = k < own.size() && own[k].with_others;
    const std::string name = fmt::format("bucket {} ({:.2f} MB)", piece.index, static_cast<double>(piece.bytes) / 1e6);
    // When it was ready: the multiply-adds' estimate beside it (the model uses the run's own).
    const double macs = k < run.ready_from_macs.size() ? run.ready_from_macs[k] * w.compute.backward_s : -1.0;
    check.terms.push_back(
        {.term = name + " ready, into backward", .run_s = piece.ready_s, .bench_s = macs, .estimate_only = true});
    check.terms.push_back({.term = name + (shared ? " allreduce, with those in flight at once" : " allreduce"),
                           .run_s = k < own.size() ? own[k].seconds : piece.seconds(),
                           .bench_s = allreduce_seconds(piece.bytes, run.workers, bench),
                           .calibrated_s = allreduce_seconds(piece.bytes, run.workers, bench) * check.comm_scale *
                                           (k < check.bucket_shape.size() ? check.bucket_shape[k] : 1.0)});
  }
  const AllreduceOverhead overhead = allreduce_overhead(run, together);
  check.terms.push_back({.term = "buckets ready but not started", .run_s = overhead.idle_s, .bench_s = 0,
                         .calibrated_s = overhead.idle_s});
  check.terms.push_back({.term = "the step's end after the last bucket", .run_s = overhead.after_last_s,
                         .bench_s = 0, .calibrated_s = overhead.after_last_s});
}

void add_server_terms(RunCheck& check, const MeasuredRun& run, const NetworkConstants& bench,
                      const ServerLayout& layout, const StepPrediction& alone) {
  const bool sync = check.transport == PredictTransport::PsSync;
  const double transfer = ps_transfer_seconds(run.workload.gradient_bytes, run.workers, layout, bench, sync);
  for (const MeasuredPiece& piece : run.comm_pieces) {
    double model = -1.0;
    if (piece.what == "push" || piece.what == "pull") model = transfer;
    if (piece.what == "wait for servers") model = std::max(0.0, alone.comm_total_s - 2 * transfer);
    check.terms.push_back({.term = piece.what, .run_s = piece.seconds(), .bench_s = model});
  }
}

std::string percent_off(double model, double run) {
  return run > 0 ? fmt::format("{:+.0f}%", 100 * (model / run - 1)) : "-";
}

// Carried to the run's own comm, every piece takes its time in the run; what can still be off is
// where the model puts the buckets against backward. Names the bucket it ends furthest from the run.
std::string overlap_note(const MeasuredRun& run, const StepPrediction& calibrated) {
  const double off = calibrated.comm_exposed_s - run.measured_comm_s;
  if (std::abs(off) <= std::max(0.05 * run.measured_comm_s, 1e-4)) return "";
  int worst = -1;
  double worst_model = 0, worst_run = 0;
  for (const MeasuredPiece& piece : run.comm_pieces) {
    const auto k = static_cast<size_t>(piece.index);
    if (piece.what != "allreduce bucket" || piece.index < 0 || k >= calibrated.bucket_end_s.size()) continue;
    if (worst < 0 || std::abs(calibrated.bucket_end_s[k] - piece.end_s) > std::abs(worst_model - worst_run)) {
      worst = piece.index;
      worst_model = calibrated.bucket_end_s[k];
      worst_run = piece.end_s;
    }
  }
  std::string note = fmt::format("; carried to the run's comm, the exposed comm is {:+.1f} ms ({}) off", 1e3 * off,
                                 percent_off(calibrated.comm_exposed_s, run.measured_comm_s));
  if (worst >= 0) {
    note += fmt::format(": the overlap with backward, bucket {} done {:.1f} ms into backward in the model, {:.1f} in "
                        "the run", worst, 1e3 * worst_model, 1e3 * worst_run);
  }
  return note;
}

}  // namespace

std::optional<RunCheck> check_against_run(const MeasuredRun& run, const NetworkConstants& bench,
                                          const ServerLayout& layout) {
  const auto transport = known_transport(run.transport);
  if (!transport || run.comm_pieces.empty() || run.link.empty() || run.workers < 2) return std::nullopt;
  RunCheck check{.transport = *transport, .link = run.link, .workers = run.workers};
  const StepPrediction alone = predict_step(*transport, run.workload, run.workers, layout, bench);
  const double comm_total = run_comm_total(run);
  NetworkConstants scaled = bench;
  scaled.straggler_in_comm = true;
  double buckets_total = comm_total;
  const bool together = buckets_in_flight_together(*transport);
  if (allreduce_transport(*transport)) {
    check.bucket_shape = bucket_shape(run, bench, together);
    scaled.bucket_shape = check.bucket_shape;
    check.step_overhead_s = allreduce_overhead(run, together).total();
    scaled.step_overhead_s = check.step_overhead_s;
    buckets_total += check.step_overhead_s;  // the model counts the overhead in its comm total too
  }
  // The servers' model has no overlap with backward: all its round is exposed, so it is carried to
  // the round the run's step waited for (a bucketed run's pushes ran partly under backward; its
  // total would put that part into the step a second time).
  const double target = allreduce_transport(*transport) ? comm_total : run.measured_comm_s;
  check.comm_scale = fitted_comm_scale(run, *transport, scaled, layout, target);
  scaled.comm_scale = check.comm_scale;
  const StepPrediction calibrated = predict_step(*transport, run.workload, run.workers, layout, scaled);

  if (allreduce_transport(*transport)) {
    add_allreduce_terms(check, run, bench, together);
  } else {
    add_server_terms(check, run, bench, layout, alone);
  }
  // The one term the bench alone misses by the most time decides what the note says.
  const auto miss = [](const CheckTerm& t) { return t.bench_s < 0 || t.estimate_only ? 0 : std::abs(t.bench_s - t.run_s); };
  const auto worst = std::max_element(check.terms.begin(), check.terms.end(),
                                      [&](const CheckTerm& a, const CheckTerm& b) { return miss(a) < miss(b); });
  if (worst != check.terms.end() && miss(*worst) > 0) {
    check.most_off = fmt::format("most off, on the bench alone: {}, {:.1f} ms against {:.1f} ms in the run ({}); "
                                 "the run's comm is {:.2f} x the bench's at {} workers and {}",
                                 worst->term, 1e3 * worst->bench_s, 1e3 * worst->run_s,
                                 percent_off(worst->bench_s, worst->run_s), check.comm_scale, run.workers, run.link);
  }
  check.most_off += overlap_note(run, calibrated);
  check.terms.push_back({.term = "comm per step, total", .run_s = buckets_total, .bench_s = alone.comm_total_s,
                         .calibrated_s = calibrated.comm_total_s});
  check.terms.push_back({.term = "comm per step, exposed", .run_s = run.measured_comm_s,
                         .bench_s = alone.comm_exposed_s, .calibrated_s = calibrated.comm_exposed_s});
  check.terms.push_back({.term = "step", .run_s = run.measured_step_s, .bench_s = alone.step_s,
                         .calibrated_s = calibrated.step_s});
  return check;
}

}  // namespace dtbench
