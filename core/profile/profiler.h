#pragma once
// Per-step phase times, kept per epoch and summarised as sum, mean, median and p95. Every step's
// times are kept (56 bytes a step: 5.6 MB for 100,000 steps) so that figures over several epochs
// are exact percentiles of their steps, not averages of per-epoch ones. Recording a step is a
// push_back of a few doubles: the clock reads that feed it happen in the training loop
// (kClockReadsPerStep per step), and their cost is measured (clock_cost_seconds) so reports can state the
// profiler's overhead instead of assuming it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/profile/phases.h"

namespace dtbench {

struct PhaseStats {
  double sum = 0.0, mean = 0.0, median = 0.0, p95 = 0.0, min = 0.0, max = 0.0;  // seconds
};

struct EpochPhases {
  int64_t epoch = 0;
  int64_t steps = 0;
  std::array<PhaseStats, kPhaseCount> phase{};
  PhaseStats step;  // whole steps
  const PhaseStats& operator[](Phase p) const { return phase[static_cast<size_t>(p)]; }
};

// Nearest-rank percentile of sorted samples, q in [0, 1]; 0 for none. The benches use it too.
double percentile(const std::vector<double>& sorted, double q);
PhaseStats summarize(std::vector<double> samples);
// Every phase and the whole step over these steps: exact medians and p95s.
EpochPhases summarize_steps(const std::vector<StepTimes>& steps);

// The warm-up rule of every report: with more than one epoch, epoch 1 (cold caches, first
// allocations, connections being set up) is left out of the steady-state figures — per-step times
// and their percentiles, images/s, epoch times; with one epoch nothing is left out. Totals (run
// time, images, bytes) cover the whole run. The index of the first steady epoch:
inline size_t first_steady_epoch(size_t epochs) { return epochs > 1 ? 1 : 0; }

class Profiler {
 public:
  void begin_epoch(int64_t epoch);
  void record(const StepTimes& step) { steps_.push_back(step); }
  EpochPhases end_epoch() const;
  // This epoch's steps so far.
  const std::vector<StepTimes>& steps() const { return steps_; }

  // Seconds one steady_clock read costs on this machine (median of repeated timings).
  static double clock_cost_seconds();
  // Clock reads the training loop makes per step.
  static constexpr int kClockReadsPerStep = 9;  // 5 in the loop, 4 in Transport::finish_step

 private:
  int64_t epoch_ = 0;
  std::vector<StepTimes> steps_;
};

}  // namespace dtbench
