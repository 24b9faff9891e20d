#pragma once
// Forward and backward time per operator kind (conv2d, batchnorm2d, linear, relu, ...), summed
// over every layer of that kind, so a report can say which operator dominates a step — the seed
// study's way of explaining gaps between frameworks. Off unless a model is given one; when on it
// costs two clock reads per layer call; report.json states that cost as a share of the step
// (summary.operator_timing_overhead_estimate).
#include <chrono>
#include <map>
#include <string>

namespace dtbench {

struct OperatorTime {
  double forward_seconds = 0.0;
  double backward_seconds = 0.0;
  int64_t forward_calls = 0;
  int64_t backward_calls = 0;
};

class OperatorTimes {
 public:
  void add_forward(const std::string& kind, double seconds) {
    auto& t = times_[kind];
    t.forward_seconds += seconds;
    ++t.forward_calls;
  }
  void add_backward(const std::string& kind, double seconds) {
    auto& t = times_[kind];
    t.backward_seconds += seconds;
    ++t.backward_calls;
  }
  void clear() { times_.clear(); }
  const std::map<std::string, OperatorTime>& by_kind() const { return times_; }

 private:
  std::map<std::string, OperatorTime> times_;
};

// Times one call when `times` is set: ScopedOperatorTimer timer(times, kind, backward).
class ScopedOperatorTimer {
 public:
  ScopedOperatorTimer(OperatorTimes* times, const std::string& kind, bool backward)
      : times_(times), kind_(kind), backward_(backward) {
    if (times_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~ScopedOperatorTimer() {
    if (times_ == nullptr) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    backward_ ? times_->add_backward(kind_, seconds) : times_->add_forward(kind_, seconds);
  }
  ScopedOperatorTimer(const ScopedOperatorTimer&) = delete;
  ScopedOperatorTimer& operator=(const ScopedOperatorTimer&) = delete;

 private:
  OperatorTimes* times_;
  const std::string& kind_;
  bool backward_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dtbench
