#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3", SC11;
// the Random123 library): a counter-based generator. Four 32-bit words of output are a pure
// function of a 128-bit counter and a 64-bit key, so any element's random bits can be computed
// where and when it is needed — by one GPU thread or a CPU loop — and both get the same stream.
//
// One round, on counter words (c0, c1, c2, c3) and key (k0, k1):
//   (hi0, lo0) = M0 · c0      (hi1, lo1) = M1 · c2         (32 × 32 → 64-bit products)
//   c' = (hi1 ^ c1 ^ k0,  lo1,  hi0 ^ c3 ^ k1,  lo0)
// and the key is bumped by the Weyl constants (W0, W1) between rounds; ten rounds in all.
// Checked against Random123's known-answer vectors in test_cuda_bodies.
#include <stdint.h>

#include "core/cuda/bodies/host_device.h"

namespace dtbench::cuda_bodies {

struct Philox4x32 {
  uint32_t word[4];
};

struct PhiloxKey {
  uint32_t word[2];
};

namespace philox_detail {

constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key schedule: golden ratio, sqrt(3) − 1

DTB_HOST_DEVICE inline void round(Philox4x32& c, const PhiloxKey& k) {
  const uint64_t p0 = static_cast<uint64_t>(kM0) * c.word[0];
  const uint64_t p1 = static_cast<uint64_t>(kM1) * c.word[2];
  const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
  const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
  c = {{hi1 ^ c.word[1] ^ k.word[0], lo1, hi0 ^ c.word[3] ^ k.word[1], lo0}};
}

}  // namespace philox_detail

// The ten-round Philox4x32 of `counter` under `key`.
DTB_HOST_DEVICE inline Philox4x32 philox4x32_10(Philox4x32 counter, PhiloxKey key) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      key.word[0] += philox_detail::kW0;
      key.word[1] += philox_detail::kW1;
    }
    philox_detail::round(counter, key);
  }
  return counter;
}

// The top 24 bits of a word as a float in [0, 1): exact in float on every device.
DTB_HOST_DEVICE inline float unit_float(uint32_t bits) { return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f); }

}  // namespace dtbench::cuda_bodies
