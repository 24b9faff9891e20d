#pragma once
// How many timed rounds a bench or probe makes: about `target_ms` worth at `estimate_seconds` a
// round (from its warm-up), never fewer than kMinTimedRounds (a mean of one or two says little)
// nor more than kMaxTimedRounds (a round of microseconds would otherwise take tens of thousands).
#include <algorithm>
#include <cmath>

namespace dtbench {

constexpr int kMinTimedRounds = 3;
constexpr int kMaxTimedRounds = 1000;

inline int timed_rounds(double target_ms, double estimate_seconds) {
  const double wanted = std::ceil(target_ms / 1e3 / std::max(estimate_seconds, 1e-9));
  return static_cast<int>(std::clamp<double>(wanted, kMinTimedRounds, kMaxTimedRounds));
}

}  // namespace dtbench
