#pragma once
// Whether floats are finite, read from their bits: a build with -ffinite-math-only (or a
// compiler that assumes no Inf / NaN) could otherwise fold std::isfinite to true.
#include <cstdint>
#include <cstring>
#include <span>

namespace dtbench {

inline bool is_finite_bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  return (bits & 0x7f800000u) != 0x7f800000u;  // exponent all ones: Inf or NaN
}

// The index of the first Inf or NaN in `values`, or -1. One branch-free pass (it vectorises) and
// a second only when there is something to find.
inline int64_t first_non_finite(std::span<const float> values) {
  bool any = false;
  for (const float value : values) any |= !is_finite_bits(value);
  if (!any) return -1;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!is_finite_bits(values[i])) return static_cast<int64_t>(i);
  }
  return -1;
}

}  // namespace dtbench
