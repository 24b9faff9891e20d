#pragma once
// A small seeded generator (splitmix64 seeding a xoshiro256**) whose output does not depend on
// the standard library's distributions, so the same seed gives bit-identical weights, shuffles
// and synthetic data on every compiler and machine.
#include <cmath>
#include <cstdint>

namespace dtbench {

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& word : state_) {
      seed += 0x9E3779B97F4A7C15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      word = z ^ (z >> 31);
    }
  }

  // A generator for a named sub-stream (e.g. rank, epoch) that does not overlap its parent's use.
  static Rng derive(uint64_t seed, uint64_t stream_a, uint64_t stream_b = 0) {
    return Rng(seed ^ (stream_a * 0xD1B54A32D192ED03ull) ^ (stream_b * 0x8CB92BA72F3D8DD7ull));
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 24 bits, exactly representable as float.
  float uniform() { return static_cast<float>(next_u64() >> 40) * 0x1.0p-24f; }
  float uniform(float low, float high) { return low + (high - low) * uniform(); }

  // Uniform integer in [0, bound); bound > 0. The modulo bias is below 2^-32 for our sizes.
  uint64_t below(uint64_t bound) { return next_u64() % bound; }

  // Standard normal by Box-Muller in double, so the result is the same everywhere.
  float normal() {
    double u1 = (static_cast<double>(next_u64() >> 11) + 1.0) * 0x1.0p-53;
    double u2 = static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
    return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace dtbench
