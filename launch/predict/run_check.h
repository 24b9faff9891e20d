#pragma once
// The prediction at the run's own workers and link set against the run, term by term: a cost
// model must first say what already happened. The run's compute is taken as measured, so what is
// left to be off is communication — when each bucket was ready (backward's shape), how long each
// piece took inside training against what the bench measured without training beside it, and
// how much of it backward hid. The check names the term most off, and gives the factor that
// carries the run's own communication into the predictions at its link (comm_scale).
#include <optional>
#include <string>
#include <vector>

#include "launch/predict/cost_model.h"
#include "launch/predict/workload.h"

namespace dtbench {

struct CheckTerm {
  std::string term;
  double run_s = 0.0;
  double bench_s = -1.0;       // the model on the bench's constants alone; negative: it has no such term
  double calibrated_s = -1.0;  // the model with comm_scale; negative: not a term the scale changes
  bool estimate_only = false;  // bench_s is an estimate the model no longer uses (multiply-adds)
};

struct RunCheck {
  PredictTransport transport = PredictTransport::Ring;
  std::string link{};
  int workers = 0;
  // The run's comm per step (its waits for the slowest worker included) over the bench-only
  // model's buckets or rounds, at its N and link.
  double comm_scale = 1.0;
  std::vector<double> bucket_shape{};  // allreduce: NetworkConstants::bucket_shape, from the run's buckets
  double step_overhead_s = 0.0;        // allreduce: NetworkConstants::step_overhead_s, the run's
  std::vector<CheckTerm> terms{};
  std::string most_off{};   // the bench-only term furthest from the run, in words
};

// nullopt where the run recorded no communication pieces, names no link (not on the emulated
// cluster), or ran a transport the model does not know. `bench`: the run's transport's constants
// at the run's link, comm_scale 1.
std::optional<RunCheck> check_against_run(const MeasuredRun& run, const NetworkConstants& bench,
                                          const ServerLayout& layout);

}  // namespace dtbench
