#pragma once
// The cost model fitted on runs of smaller clusters, predicting a larger one from nothing of its
// run but its configuration (the worker count). Each term is fitted where the runs measured it:
//   compute     every rank's per-step compute pooled over the runs; a synchronous step of N waits
//               for the largest of N draws from it (order_statistic.h), an async one for the mean;
//   allreduce   alpha and beta fitted on the buckets' times inside training (each rank's bucket
//               less its wait for the last rank to arrive; buckets in flight together timed
//               together), and the delays no bucket accounts for (the arrival-time exchange, ready
//               buckets waiting for the communication thread): what is left of each run's step,
//               its mean; each bucket's time over the line, pooled over the runs, kept as its
//               shape; MPI_Allreduce's buckets counted in the steps of the algorithm Open MPI takes
//               at each N (comm/open_mpi_allreduce.h). A step of N is replayed (replay.h): N
//               ranks' computes drawn, each bucket reduced once the last rank has it ready, so a
//               slow rank costs what the communication does not already wait;
//   servers     push + pull as timed inside training, a line in (N-1)/N (the bytes a worker's and
//               a shard's links carry); the rest of the round beyond the slowest worker's compute
//               (the servers' summing and update, gRPC's work, less what of push and pull ran
//               under backward with bucketed pushes) a line in N; the two together never below 0.
// Runs at one host count cannot fix how communication grows with N: then the benches (bench
// allreduce / bench ps at that host count) give its shape, scaled to the runs.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "launch/predict/cost_model.h"
#include "launch/predict/fit.h"
#include "launch/predict/fit_runs.h"

namespace dtbench {

// One term against the workers N: a + b * shape(N), never below 0.
struct TermFit {
  double a = 0.0, b = 0.0;
  std::function<double(int)> shape = [](int) { return 0.0; };
  std::string how{};  // how it was fitted, in words
  double at(int workers) const { return std::max(0.0, line(workers)); }
  double line(int workers) const { return a + b * shape(workers); }  // below 0 too
};

// Least squares of y = a + b * shape(N) through (N, y) points; with one distinct N, the constant
// y (b = 0). InputError for no points. mean_term: the points' mean (b = 0), whatever their N.
TermFit fit_term(const std::vector<std::pair<int, double>>& points, std::function<double(int)> shape,
                 const std::string& shape_text);
TermFit mean_term(const std::vector<std::pair<int, double>>& points);

// The fit set against a host count it was fitted on: the runs' mean step there and the fit's.
struct OwnRunCheck {
  int workers = 0;
  double measured_s = 0.0, fitted_s = 0.0;
  double error() const { return (fitted_s - measured_s) / measured_s; }
};
// Beyond this, a fit that misses its own runs is said to: their steps do not follow its terms in N,
// and what it predicts further out is less sure.
constexpr double kOwnRunTolerance = 0.10;

// The fit checked on its own runs held out (run_fit_sureness.h): the largest host count left out
// and predicted from the runs at the others alone.
struct HeldOutCheck {
  std::vector<int> fitted_on{};  // the host counts it was fitted on
  int workers = 0;               // the host count predicted
  double measured_s = 0.0, predicted_s = 0.0;
  double error() const { return (predicted_s - measured_s) / measured_s; }
};

struct RunFit {
  PredictTransport transport = PredictTransport::Ring;
  std::string model{}, link{};
  std::vector<std::string> fit_runs{};  // the run directories
  std::vector<int> fit_workers{};       // their worker counts, each once
  std::vector<double> compute_samples{};
  double mean_compute_s = 0.0;
  double compute_speedup = 1.0;   // the runs' compute divided by this (divide_compute)
  Workload workload{};            // compute phases (scaled to the pooled mean), buckets, when each was ready
  NetworkConstants allreduce{};   // allreduce: fitted on the runs' buckets
  TermFit overhead{};             // allreduce: the delays no bucket accounts for (their mean)
  TermFit transfer{};             // parameter servers: push + pull
  // Parameter servers: the rest of the round — the servers' work and the waits, less what of the
  // push and pull ran under backward (bucketed pushes), so it may be below 0.
  TermFit servers{};
  std::vector<std::string> notes{};  // each term's fit, in words
  std::vector<OwnRunCheck> own_runs{};  // at each fit host count, in order
  std::optional<HeldOutCheck> held_out{};  // runs at three host counts or more: the largest held out
};

// `benches` may be null: then the runs must span two host counts at least.
RunFit fit_on_runs(const std::vector<FitRun>& runs, const FittedConstants* benches);

// What if the workers computed `speedup` times faster than the fit runs did (another CPU, the same
// CPU less loaded): every compute sample and phase divided by it, so the slowest of N and the
// buckets' ready times follow; the communication terms stay the runs'. The notes say so. The checks
// on the runs themselves (own_runs, held_out) are left as they were: they are about the runs.
// InputError for a speedup that is not a positive finite number.
void divide_compute(RunFit& fit, double speedup);

struct RunFitStep {
  StepPrediction step{};
  double straggler_s = 0.0;  // the largest of N compute draws over their mean (synchronous only)
};
RunFitStep predict_from_runs(const RunFit& fit, int workers);

// The algorithms Open MPI's MPI_Allreduce takes for these buckets at `workers` ranks, each once:
// "rabenseifner (64.2 MiB, 8.6 MiB), ring (120.0 KiB)".
std::string mpi_algorithms_text(const std::vector<int64_t>& bucket_bytes, int workers);

}  // namespace dtbench
