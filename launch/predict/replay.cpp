#include "launch/predict/replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "core/util/error.h"
#include "launch/predict/backward_sharing.h"

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
    bucket_start_.resize(cost_.size());
    bucket_end_.resize(cost_.size());
    for (size_t k = 0; k < cost_.size(); ++k) lost_rate_.push_back(backward_lost_per_second(c, w, k, workers));
    sharing_ = std::any_of(lost_rate_.begin(), lost_rate_.end(), [](double r) { return r > 0; });
    fit_lost_ = c.backward_sharing.fit_lost_s;
  }

  // The step's time; bucket_end() holds each bucket's end after it. Where backward shares its
  // host's CPU with the communication in flight beside it, each rank's backward is what it was
  // in the fit's runs less what it lost there, plus what it loses here: found by going round
  // (backward's length moves when its buckets are ready, and so what runs beside it).
  double step(const std::vector<double>& computes) {
    const size_t ranks = computes.size();
    start_.resize(ranks), alone_.resize(ranks), length_.resize(ranks);
    for (size_t r = 0; r < ranks; ++r) {
      start_[r] = before_backward_ * computes[r];
      length_[r] = backward_ * computes[r];
      alone_[r] = std::max(0.0, length_[r] - fit_lost_);
    }
    const int rounds = sharing_ ? kSharingRounds : 1;
    double step_end = 0;
    for (int round = 0; round < rounds; ++round) {
      step_end = schedule();
      if (round + 1 == rounds) break;
      for (size_t r = 0; r < ranks; ++r) length_[r] = alone_[r] + lost_beside(r);
    }
    lost_ = 0;
    for (size_t r = 0; r < ranks; ++r) lost_ += (length_[r] - backward_ * computes[r]) / static_cast<double>(ranks);
    return step_end;
  }

  // The ranks' mean backward beyond their draws' after the last step (what the comm beside it took).
  double lost() const { return lost_; }

  const std::vector<double>& bucket_end() const { return bucket_end_; }
  double comm_total() const {
    double sum = 0;
    for (const double k : cost_) sum += k;
    return sum;
  }

 private:
  static constexpr int kSharingRounds = 6;

  // The buckets one after another from each one's last rank's ready time; the step's end.
  double schedule() {
    std::fill(ready_.begin(), ready_.end(), 0.0);
    double backward_end = 0;
    for (size_t r = 0; r < start_.size(); ++r) {
      backward_end = std::max(backward_end, start_[r] + length_[r]);
      for (size_t k = 0; k < ready_.size(); ++k) {
        ready_[k] = std::max(ready_[k], start_[r] + ready_share_[k] * length_[r]);
      }
    }
    double communication_free = 0;
    for (size_t k = 0; k < cost_.size(); ++k) {
      bucket_start_[k] = std::max(communication_free, ready_[k]);
      communication_free = bucket_start_[k] + cost_[k];
      bucket_end_[k] = communication_free;
    }
    return std::max(backward_end, communication_free);
  }

  // What rank r's backward loses to the communication in flight beside it.
  double lost_beside(size_t r) const {
    const double from = start_[r], to = start_[r] + length_[r];
    double lost = 0;
    for (size_t k = 0; k < cost_.size(); ++k) {
      lost += lost_rate_[k] * std::max(0.0, std::min(to, bucket_end_[k]) - std::max(from, bucket_start_[k]));
    }
    return lost;
  }

  double before_backward_ = 0, backward_ = 0, fit_lost_ = 0, lost_ = 0;
  bool sharing_ = false;
  std::vector<double> cost_, ready_share_, lost_rate_, ready_, bucket_start_, bucket_end_;
  std::vector<double> start_, alone_, length_;  // each rank's backward: start, alone, with the comm beside it
};

// Adds one replayed step, of probability `weight`, to the means.
void add_step(StepReplay& replay, const std::vector<double>& computes, double weight, ReplayedSteps& out) {
  out.step_s += weight * replay.step(computes);
  double sum = 0;
  for (const double compute : computes) sum += compute;
  out.compute_s += weight * (sum / static_cast<double>(computes.size()) + replay.lost());
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
