#pragma once
// Which samples each worker sees. The whole set is permuted once with the seed; rank r takes the
// r-th of `world` contiguous slices of size / world samples (the remainder is dropped, so every
// rank runs the same number of steps). Shards are disjoint, together cover the set up to the
// remainder, and depend only on (size, world, seed).
#include <cstdint>
#include <span>
#include <vector>

#include "core/util/rng.h"

namespace dtbench {

// InputError for world < 1, rank outside 0..world-1, or world > size.
std::vector<int64_t> shard_indices(int64_t size, int rank, int world, uint64_t seed);

// Fisher-Yates with our Rng, so every machine gets the same order.
void shuffle_indices(std::span<int64_t> indices, Rng& rng);

}  // namespace dtbench
