#pragma once
// Steady-clock arithmetic in seconds, as every timer in the project reads it.
#include <chrono>

namespace dtbench {

inline double seconds_between(std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return seconds_between(start, std::chrono::steady_clock::now());
}

// Seconds as a steady-clock duration, for deadlines (callers keep `seconds` far from overflow).
inline std::chrono::steady_clock::duration to_duration(double seconds) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace dtbench
