#pragma once
// How sure a prediction fitted on runs is, from those runs alone: checked on them held out, and
// how far their own spread moves it.
//
// Held out: with runs at three host counts or more, the largest is left out and predicted from
// the others, as the validation on the emulated cluster does (docs/predict.md) — a user's own
// cluster's answer to how far one host count beyond its runs the model can be trusted.
//
// The runs' spread: Where a host count has several
// runs (repeats), the model is fitted again on each choice of one run per host count — what a user
// with a single run at each size could have got — and each of those fits' steps at N gives the
// range beside the fit on every run. Runs of a few milliseconds a step on shared machines repeat
// only within 5-35 % (docs/predict.md), and a line through two host counts carries that to every N,
// further the further out: the range says so where the one figure cannot. It is the runs' noise
// alone, a floor on how unsure the prediction is and no bound: the model's own error, which the
// held-out check shows, comes on top (on the emulated cluster the measured step fell inside the
// range a quarter of the time: docs/predict.md).
#include <optional>
#include <vector>

#include "launch/predict/fit_runs.h"
#include "launch/predict/run_fit.h"

namespace dtbench {

struct StepRange {
  double low_s = 0.0, high_s = 0.0;
  int fits = 0;  // the choices of one run per host count fitted
};

// More choices than this (many repeats at many host counts) are sampled evenly among all of them.
constexpr int kMostRepeatFits = 64;

// The largest host count of `runs` predicted from the runs at the others (with `benches` where the
// model takes them); none with fewer than three host counts, or where the rest cannot be fitted.
std::optional<HeldOutCheck> held_out_on_own_runs(const std::vector<FitRun>& runs, const FittedConstants* benches);

// The range of the step at each of `workers` (in order) over the fits on one run per host count;
// empty where every host count has one run (nothing to choose), or where no choice could be fitted.
// Each fit's compute divided by `compute_speedup`, as the prediction beside it (run_fit.h).
std::vector<std::optional<StepRange>> step_ranges_over_repeats(const std::vector<FitRun>& runs,
                                                               const FittedConstants* benches,
                                                               const std::vector<int>& workers,
                                                               double compute_speedup = 1.0);

}  // namespace dtbench
