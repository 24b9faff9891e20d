#include "core/data/shard.h"

#include <numeric>
#include <utility>

#include "core/util/error.h"

namespace dtbench {

namespace {

constexpr uint64_t kShardStream = 0x5348415244;  // "SHARD"

}  // namespace

std::vector<int64_t> shard_indices(int64_t size, int rank, int world, uint64_t seed, int64_t epoch,
                                   bool shuffle) {
  std::vector<int64_t> order, shard;
  draw_shard(size, rank, world, seed, epoch, shuffle, order, shard);
  return shard;
}

void draw_shard(int64_t size, int rank, int world, uint64_t seed, int64_t epoch, bool shuffle,
                std::vector<int64_t>& order, std::vector<int64_t>& shard) {
  if (world < 1) fail_input("world size {} must be at least 1", world);
  if (rank < 0 || rank >= world) fail_input("rank {} out of range for world size {}: expected 0..{}", rank, world, world - 1);
  if (world > size) fail_input("world size {} is larger than the data set ({} samples)", world, size);
  order.resize(static_cast<size_t>(size));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (shuffle) {
    Rng rng = Rng::derive(seed, kShardStream, static_cast<uint64_t>(epoch));
    shuffle_indices(order, rng);
  }
  const int64_t shard_size = size / world;
  shard.resize(static_cast<size_t>(shard_size));
  for (int64_t k = 0; k < shard_size; ++k) {
    shard[static_cast<size_t>(k)] = order[static_cast<size_t>(rank + k * world)];
  }
}

void shuffle_indices(std::span<int64_t> indices, Rng& rng) {
  for (size_t i = indices.size(); i > 1; --i) std::swap(indices[i - 1], indices[rng.below(i)]);
}

}  // namespace dtbench
