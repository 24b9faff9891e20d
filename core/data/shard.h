#pragma once
// Which samples each worker sees, as PyTorch's DistributedSampler does it: each epoch the whole
// set is put in one order — a permutation drawn from (seed, epoch) when shuffling, ascending
// otherwise — identical on every rank, and rank r takes every world-th sample of it starting at
// r, size / world samples in all (the remainder is dropped, so every rank runs the same number of
// steps). Shards are disjoint and together cover the set up to the remainder. Because the global
// order is shared, batch b of ranks 0..N-1 together holds exactly the samples of batch b of one
// worker with an N-times larger batch: data-parallel training then computes the same gradients as
// one worker does, which is what makes transports comparable (and testable).
#include <cstdint>
#include <span>
#include <vector>

#include "core/util/rng.h"

namespace dtbench {

// Rank's samples for `epoch`, in the order it trains on them. InputError for world < 1, rank
// outside 0..world-1, or world > size.
std::vector<int64_t> shard_indices(int64_t size, int rank, int world, uint64_t seed, int64_t epoch = 0,
                                   bool shuffle = true);

// The same, reusing `order` (scratch, the global order) and `shard` (the result) so that drawing
// an epoch's shard allocates nothing once their capacity suffices.
void draw_shard(int64_t size, int rank, int world, uint64_t seed, int64_t epoch, bool shuffle,
                std::vector<int64_t>& order, std::vector<int64_t>& shard);

// Fisher-Yates with our Rng, so every machine gets the same order.
void shuffle_indices(std::span<int64_t> indices, Rng& rng);

}  // namespace dtbench
