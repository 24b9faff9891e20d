#pragma once
// FNV-1a over bytes: stable across runs, compilers and hosts, which is what its users need —
// parameter initialisation seeds, key placement, checkpoint and weight checksums.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace dtbench {

inline constexpr uint64_t kFnvOffsetBasis = 1469598103934665603ull;

// Continues `hash` over `bytes` (chain calls to hash several pieces as one).
inline uint64_t fnv1a(std::span<const std::byte> bytes, uint64_t hash = kFnvOffsetBasis) {
  for (const std::byte b : bytes) hash = (hash ^ static_cast<unsigned char>(b)) * 1099511628211ull;
  return hash;
}

inline uint64_t fnv1a(std::string_view text, uint64_t hash = kFnvOffsetBasis) {
  return fnv1a(std::as_bytes(std::span<const char>(text.data(), text.size())), hash);
}

inline uint64_t fnv1a(std::span<const float> values, uint64_t hash = kFnvOffsetBasis) {
  return fnv1a(std::as_bytes(values), hash);
}

}  // namespace dtbench
