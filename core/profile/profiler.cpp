#include "core/profile/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace dtbench {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

PhaseStats summarize(std::vector<double> samples) {
  PhaseStats stats;
  if (samples.empty()) return stats;
  std::sort(samples.begin(), samples.end());
  for (double s : samples) stats.sum += s;
  const size_t n = samples.size();
  stats.mean = stats.sum / static_cast<double>(n);
  stats.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  stats.p95 = percentile(samples, 0.95);
  stats.min = samples.front();
  stats.max = samples.back();
  return stats;
}

void Profiler::begin_epoch(int64_t epoch) {
  epoch_ = epoch;
  steps_.clear();
}

EpochPhases summarize_steps(const std::vector<StepTimes>& steps) {
  EpochPhases result;
  result.steps = static_cast<int64_t>(steps.size());
  std::vector<double> samples(steps.size());
  for (size_t p = 0; p < kPhaseCount; ++p) {
    for (size_t i = 0; i < steps.size(); ++i) samples[i] = steps[i].phase[p];
    result.phase[p] = summarize(samples);
  }
  for (size_t i = 0; i < steps.size(); ++i) samples[i] = steps[i].total;
  result.step = summarize(samples);
  return result;
}

EpochPhases Profiler::end_epoch() const {
  EpochPhases result = summarize_steps(steps_);
  result.epoch = epoch_;
  return result;
}

double Profiler::clock_cost_seconds() {
  using Clock = std::chrono::steady_clock;
  constexpr int kReads = 10000;
  std::vector<double> trials;
  for (int trial = 0; trial < 7; ++trial) {
    const auto start = Clock::now();
    Clock::time_point sink{};
    for (int i = 0; i < kReads; ++i) sink = std::max(sink, Clock::now());
    trials.push_back(std::chrono::duration<double>(sink - start).count() / kReads);
  }
  std::sort(trials.begin(), trials.end());
  return trials[trials.size() / 2];
}

}  // namespace dtbench
