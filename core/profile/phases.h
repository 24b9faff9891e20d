#pragma once
// The vocabulary of every report: one training step splits into these phases, which sum to the
// step. `other` is the step's time minus the rest, so nothing is hidden.
#include <array>
#include <cstddef>
#include <string_view>

namespace dtbench {

enum class Phase : size_t { Load, Forward, Backward, Comm, Update, Other };
inline constexpr size_t kPhaseCount = 6;
inline constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {
    "load", "forward", "backward", "comm", "update", "other"};

inline constexpr std::string_view phase_name(Phase phase) { return kPhaseNames[static_cast<size_t>(phase)]; }

// One step's durations in seconds, by phase, and the step's wall time.
struct StepTimes {
  std::array<double, kPhaseCount> phase{};
  double total = 0.0;
  double& operator[](Phase p) { return phase[static_cast<size_t>(p)]; }
  double operator[](Phase p) const { return phase[static_cast<size_t>(p)]; }
};

}  // namespace dtbench
