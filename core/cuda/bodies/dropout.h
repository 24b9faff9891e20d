#pragma once
// Dropout's mask drawn where it is used: each group of four elements takes one Philox4x32-10 draw
// (philox.h), keyed by the layer's seed, with the counter (group index, pass number), so element i
// of pass `call` is the same on the CPU (core/layers/activation.cpp loops over the groups) and on
// the GPU (one thread per group, core/cuda/kernels.cu): no stream to copy, no order to keep.
//
//   counter = (i / 4 low word, i / 4 high word, call low word, call high word), key = seed
//   element i is kept when unit_float(word[i % 4]) >= probability, and then scaled by 1 / (1 − p)
#include <stdint.h>

#include "core/cuda/bodies/host_device.h"
#include "core/cuda/bodies/philox.h"

namespace dtbench::cuda_bodies {

struct DropoutDraw {
  uint64_t seed = 0;     // the layer's (Layer::reseed)
  uint64_t call = 0;     // which training pass of the layer this is
  float probability = 0;  // of dropping an element
};

// The four words of random bits for elements 4·group … 4·group + 3.
DTB_HOST_DEVICE inline Philox4x32 dropout_bits(const DropoutDraw& draw, int64_t group) {
  const auto g = static_cast<uint64_t>(group);
  const Philox4x32 counter{{static_cast<uint32_t>(g), static_cast<uint32_t>(g >> 32), static_cast<uint32_t>(draw.call),
                            static_cast<uint32_t>(draw.call >> 32)}};
  const PhiloxKey key{{static_cast<uint32_t>(draw.seed), static_cast<uint32_t>(draw.seed >> 32)}};
  return philox4x32_10(counter, key);
}

// Forward for elements 4·group … min(4·group + 4, n) − 1: mask (n) = 0 or 1 / (1 − p), out (n) =
// in · mask.
DTB_HOST_DEVICE inline void dropout_forward_group_at(int64_t group, float* out, float* mask, const float* in,
                                                     int64_t n, DropoutDraw draw) {
  const float keep_scale = draw.probability < 1.0f ? 1.0f / (1.0f - draw.probability) : 0.0f;
  const Philox4x32 bits = dropout_bits(draw, group);
  const int64_t first = 4 * group;
  for (int lane = 0; lane < 4; ++lane) {
    const int64_t i = first + lane;
    if (i >= n) break;
    const float m = unit_float(bits.word[lane]) >= draw.probability ? keep_scale : 0.0f;
    mask[i] = m;
    out[i] = in[i] * m;
  }
}

// How many groups cover n elements.
DTB_HOST_DEVICE inline int64_t dropout_groups(int64_t n) { return (n + 3) / 4; }

}  // namespace dtbench::cuda_bodies
