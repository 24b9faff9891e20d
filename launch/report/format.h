#pragma once
// How the report writes its numbers, the same in every table: milliseconds with three decimals,
// percentages with one, bytes in binary units, ratios as "1.23x".
#include <array>
#include <cmath>
#include <string>

#include <fmt/format.h>

namespace dtbench {

inline std::string ms_text(double seconds) { return fmt::format("{:.3f}", 1e3 * seconds); }
// Three decimals below a second, where short test runs live; two above.
inline std::string seconds_text(double seconds) { return fmt::format("{:.{}f}", seconds, seconds < 1 ? 3 : 2); }
inline std::string percent_text(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }
inline std::string share_text(double part, double whole) { return whole > 0 ? percent_text(part / whole) : "-"; }
inline std::string ratio_text(double value, double baseline) {
  return baseline > 0 ? fmt::format("{:.2f}x", value / baseline) : "-";
}

// 1536 -> "1.5 KiB"; below 1 KiB in bytes.
inline std::string bytes_text(double bytes) {
  constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (std::abs(bytes) >= 1024.0 && unit + 1 < kUnits.size()) {
    bytes /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, kUnits[unit]);
}

}  // namespace dtbench
