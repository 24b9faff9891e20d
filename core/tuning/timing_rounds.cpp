#include "core/tuning/timing_rounds.h"

#include <algorithm>

namespace dtbench {

namespace {

constexpr double kNotYetTimed = std::numeric_limits<double>::infinity();
// A candidate this many times the fastest is dropped (not timed again): after the first round by a
// wide margin, as one timing may fall on a busy moment; after later rounds by a narrower one. It
// cannot win, and the slow ones (direct loops on a wide layer, ten times gemm's time there) would
// otherwise cost most of the tuning.
constexpr double kDropAfterFirstRound = 2.0;
constexpr double kDropAfterRound = 1.5;
constexpr int kMinRounds = 2;
constexpr int kMaxRounds = 12;

// One candidate's timings: the least undisturbed one counts; the least of all where every one was
// disturbed.
struct Timings {
  double quiet_ms = kNotYetTimed, any_ms = kNotYetTimed;
  int quiet = 0, all = 0;
  void add(const QuietTiming& t) {
    ++all;
    any_ms = std::min(any_ms, t.ms);
    if (!t.disturbed) {
      ++quiet;
      quiet_ms = std::min(quiet_ms, t.ms);
    }
  }
  double best() const { return quiet > 0 ? quiet_ms : any_ms; }
};

}  // namespace

TimingRounds time_in_rounds(size_t candidates, size_t rule, double target_ms,
                            const std::function<QuietTiming(size_t)>& time_one) {
  std::vector<Timings> timings(candidates);
  std::vector<bool> timed(candidates, true);
  const auto fastest_ms = [&] {
    double fastest = kNotYetTimed;
    for (const Timings& t : timings) fastest = std::min(fastest, t.best());
    return fastest;
  };
  const auto drop_slower_than = [&](double factor) {
    double fastest_quiet = kNotYetTimed;
    for (const Timings& t : timings) fastest_quiet = std::min(fastest_quiet, t.quiet_ms);
    for (size_t i = 0; i < candidates; ++i) {
      if (i != rule && timings[i].quiet > 0 && timings[i].quiet_ms > factor * fastest_quiet) timed[i] = false;
    }
  };
  int wanted = kMaxRounds;
  for (int round = 0; round < kMaxRounds; ++round) {
    for (size_t i = 0; i < candidates; ++i) {
      if (timed[i]) timings[i].add(time_one(i));
    }
    drop_slower_than(round == 0 ? kDropAfterFirstRound : kDropAfterRound);
    if (round == 0) wanted = std::clamp(static_cast<int>(target_ms / std::max(fastest_ms(), 1e-3)), kMinRounds, kMaxRounds);
    bool enough = round + 1 >= wanted;
    for (size_t i = 0; i < candidates; ++i) enough = enough && (!timed[i] || timings[i].quiet >= kMinRounds);
    if (enough) break;
  }
  TimingRounds out;
  for (const Timings& t : timings) {
    out.best_ms.push_back(t.best());
    out.disturbed += t.all - t.quiet;
    out.timed += t.all;
  }
  return out;
}

}  // namespace dtbench
