#pragma once
// One scratch workspace per device serves every cuDNN call (they run one at a time on the
// worker's stream). It only grows, in whole MiB, so that a network's largest need is met after its
// first step and later steps never allocate. Plain C++, tested on the CPU.
#include <cstdint>

namespace dtbench::cuda_plan {

constexpr int64_t kWorkspaceGranule = int64_t{1} << 20;

// The size to hold `needed` bytes given `current`: `current` when it suffices, else `needed`
// rounded up to the granule.
constexpr int64_t workspace_size_for(int64_t current, int64_t needed) {
  if (needed <= current) return current;
  return (needed + kWorkspaceGranule - 1) / kWorkspaceGranule * kWorkspaceGranule;
}

// The most workspace an algorithm search may consider: what the device has free, less a margin
// for the activations of the step that follows, and never more than `cap`.
constexpr int64_t search_workspace_limit(int64_t free_bytes, int64_t cap) {
  const int64_t usable = free_bytes / 2;
  return usable < cap ? (usable > 0 ? usable : 0) : cap;
}

}  // namespace dtbench::cuda_plan
