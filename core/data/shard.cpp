#include "core/data/shard.h"

#include <numeric>
#include <utility>

#include "core/util/error.h"

namespace dtbench {

namespace {

constexpr uint64_t kShardStream = 0x5348415244;  // "SHARD"

}  // namespace

std::vector<int64_t> shard_indices(int64_t size, int rank, int world, uint64_t seed) {
  if (world < 1) fail_input("world size {} must be at least 1", world);
  if (rank < 0 || rank >= world) fail_input("rank {} out of range for world size {}: expected 0..{}", rank, world, world - 1);
  if (world > size) fail_input("world size {} is larger than the data set ({} samples)", world, size);
  std::vector<int64_t> all(static_cast<size_t>(size));
  std::iota(all.begin(), all.end(), int64_t{0});
  Rng rng = Rng::derive(seed, kShardStream);
  shuffle_indices(all, rng);
  const int64_t shard_size = size / world;
  const auto first = all.begin() + rank * shard_size;
  return {first, first + shard_size};
}

void shuffle_indices(std::span<int64_t> indices, Rng& rng) {
  for (size_t i = indices.size(); i > 1; --i) std::swap(indices[i - 1], indices[rng.below(i)]);
}

}  // namespace dtbench
