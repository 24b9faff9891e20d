#pragma once
// The grid `dtbench predict` computes: every transport x link rate x worker count, each figure with
// the measured inputs it came from, and where the fastest transport changes along the workers.
#include <optional>
#include <string>
#include <vector>

#include "launch/predict/cost_model.h"
#include "launch/predict/fit.h"
#include "launch/predict/run_check.h"
#include "launch/predict/workload.h"

namespace dtbench {

struct PredictionRow {
  PredictTransport transport = PredictTransport::Ring;
  std::string link{};
  int workers = 1;
  StepPrediction step{};
  double speedup = 1.0;     // N * T(1) / T(N): images per second against one worker alone
  double efficiency = 1.0;  // speedup / N
  double comm_share = 0.0;  // exposed comm / step
  NetworkConstants constants{};
};

// At `link`, the fastest transport is `from` up to `last_workers` and `to` from `first_workers`.
struct Crossover {
  std::string link{};
  int last_workers = 0, first_workers = 0;
  PredictTransport from = PredictTransport::Ring, to = PredictTransport::Ring;
};

struct PredictionGrid {
  MeasuredRun run{};
  ServerLayout layout{};
  double reduce_s_per_byte = 0.0;
  std::vector<PredictionRow> rows{};  // by link, transport, workers
  std::vector<Crossover> crossovers{};
  std::optional<RunCheck> check{};  // the run against the model at its own N and link, where it can be
  bool calibrated = false;          // the run's transport at its link carries the run's own comm
};

// With `calibrate`, the rows of the run's own transport at the run's link take the check's
// comm_scale: the bench's constants carried to the rate the run's communication had inside training.
PredictionGrid predict_grid(const MeasuredRun& run, const std::vector<int>& workers, const std::vector<LinkRate>& links,
                            const std::vector<PredictTransport>& transports, const FittedConstants& constants,
                            const ServerLayout& layout, bool calibrate = true);

// The winners along the workers at each link (by step time; async's staleness is not weighed).
std::vector<Crossover> find_crossovers(const std::vector<PredictionRow>& rows);

}  // namespace dtbench
