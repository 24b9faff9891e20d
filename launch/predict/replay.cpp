#include "launch/predict/replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "core/util/error.h"

namespace dtbench {

namespace {

// Up to this many combinations of the ranks' computes, every one is replayed with its probability
// (the figures exact, tests by hand); beyond, as many drawn at random.
constexpr double kExactCombinations = 65536;

// One step's timeline given each rank's compute (see replay.h).
class StepReplay {
 public:
  StepReplay(const Workload& w, int workers, const NetworkConstants& c) : cost_(w.bucket_bytes.size()) {
    const ComputePhases& phases = w.compute;
    const double total = phases.total();
    if (!(total > 0)) fail_input("replay: the workload's compute phases sum to {} s; expected more than 0", total);
    before_backward_ = (phases.update_s + phases.other_s + phases.load_s + phases.forward_s) / total;
    backward_ = phases.backward_s / total;
    double produced = 0;
    for (size_t k = 0; k < cost_.size(); ++k) {
      cost_[k] = bucket_seconds(c, k, w.bucket_bytes[k], workers);
      produced += static_cast<double>(w.bucket_bytes[k]);
      const double share =
          w.bucket_ready.empty() ? produced / static_cast<double>(w.gradient_bytes) : w.bucket_ready[k];
      ready_share_.push_back(w.overlap ? share : 1.0);
    }
    ready_.resize(cost_.size());
    bucket_end_.resize(cost_.size());
  }

  // The step's time; bucket_end() holds each bucket's end after it.
  double step(const std::vector<double>& computes) {
    std::fill(ready_.begin(), ready_.end(), 0.0);
    double backward_end = 0;
    for (const double compute : computes) {
      const double start = before_backward_ * compute, length = backward_ * compute;
      backward_end = std::max(backward_end, start + length);
      for (size_t k = 0; k < ready_.size(); ++k) ready_[k] = std::max(ready_[k], start + ready_share_[k] * length);
    }
    double communication_free = 0;
    for (size_t k = 0; k < cost_.size(); ++k) {
      communication_free = std::max(communication_free, ready_[k]) + cost_[k];
      bucket_end_[k] = communication_free;
    }
    return std::max(backward_end, communication_free);
  }

  const std::vector<double>& bucket_end() const { return bucket_end_; }
  double comm_total() const {
    double sum = 0;
    for (const double k : cost_) sum += k;
    return sum;
  }

 private:
  double before_backward_ = 0, backward_ = 0;
  std::vector<double> cost_, ready_share_, ready_, bucket_end_;
};

// Adds one replayed step, of probability `weight`, to the means.
void add_step(StepReplay& replay, const std::vector<double>& computes, double weight, ReplayedSteps& out) {
  out.step_s += weight * replay.step(computes);
  double sum = 0;
  for (const double compute : computes) sum += compute;
  out.compute_s += weight * sum / static_cast<double>(computes.size());
  for (size_t k = 0; k < out.bucket_end_s.size(); ++k) out.bucket_end_s[k] += weight * replay.bucket_end()[k];
}

}  // namespace

ReplayedSteps replay_allreduce_steps(const Workload& workload, const std::vector<double>& compute_samples,
                                     int workers, const NetworkConstants& c, int steps, uint64_t seed) {
  if (compute_samples.empty()) fail_input("replay: no per-step compute samples to draw from");
  if (workers < 2) fail_input("replay: {} worker(s); an allreduce needs 2 at least", workers);
  StepReplay replay(workload, workers, c);
  ReplayedSteps out{.bucket_end_s = std::vector<double>(workload.bucket_bytes.size(), 0.0)};
  std::map<double, double> distinct;  // each value's probability
  for (const double sample : compute_samples) distinct[sample] += 1.0 / static_cast<double>(compute_samples.size());
  const std::vector<std::pair<double, double>> values(distinct.begin(), distinct.end());
  std::vector<double> computes(static_cast<size_t>(workers));
  if (std::pow(static_cast<double>(values.size()), workers) <= kExactCombinations) {
    // Every combination, as an odometer over the distinct values.
    std::vector<size_t> digit(computes.size(), 0);
    while (true) {
      double weight = 1;
      for (size_t r = 0; r < digit.size(); ++r) computes[r] = values[digit[r]].first, weight *= values[digit[r]].second;
      add_step(replay, computes, weight, out);
      size_t r = 0;
      while (r < digit.size() && ++digit[r] == values.size()) digit[r++] = 0;
      if (r == digit.size()) break;
    }
  } else {
    std::mt19937_64 generator(seed);
    std::uniform_int_distribution<size_t> pick(0, compute_samples.size() - 1);
    for (int step = 0; step < steps; ++step) {
      for (double& compute : computes) compute = compute_samples[pick(generator)];
      add_step(replay, computes, 1.0 / steps, out);
    }
  }
  out.step_s += c.step_overhead_s;
  out.comm_total_s = replay.comm_total() + c.step_overhead_s;
  return out;
}

}  // namespace dtbench
