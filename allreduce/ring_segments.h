#pragma once
// How the ring cuts a buffer into one segment per rank. The message ring (ring.cpp) and the
// shared-memory ring (shared_ring.cpp) share it: an element's segment decides the order in which
// the ranks' values are added, so both must cut the same way to give bit-identical sums.
#include <cstdint>

namespace dtbench {

struct RingSegment {
  int64_t offset = 0;
  int64_t count = 0;
};

// Segment `index` of `world` over `count` elements; lengths differ by at most one element, and
// some are empty when count < world.
inline RingSegment ring_segment(int64_t count, int world, int index) {
  const int64_t begin = count * index / world;
  const int64_t end = count * (index + 1) / world;
  return {begin, end - begin};
}

}  // namespace dtbench
