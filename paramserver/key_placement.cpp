#include "paramserver/key_placement.h"

#include "core/util/error.h"
#include "core/util/hash.h"

namespace dtbench {

namespace {

// Balanced: a key goes to the shard its midpoint falls in when the model's floats are cut into
// `shards` equal stretches. Monotone in key order, so each shard gets a contiguous run, and no
// shard is more than one key away from total / shards.
void place_balanced(std::vector<Key>& keys, int64_t total, int shards) {
  int64_t before = 0;
  for (Key& key : keys) {
    const int64_t middle2 = 2 * before + key.float_count;  // twice the midpoint, to stay integral
    key.shard = total == 0 ? 0 : static_cast<int>(std::min<int64_t>(middle2 * shards / (2 * total), shards - 1));
    before += key.float_count;
  }
}

void place_hashed(std::vector<Key>& keys, int shards) {
  for (Key& key : keys) {
    const uint64_t hash = fnv1a(key.param_name + "#" + std::to_string(key.param_float_offset));
    key.shard = static_cast<int>(hash % static_cast<uint64_t>(shards));
  }
}

}  // namespace

PlacementPolicy parse_placement(const std::string& text) {
  if (text == "balanced") return PlacementPolicy::Balanced;
  if (text == "hash") return PlacementPolicy::Hash;
  fail_input("key placement '{}' is not known; choose balanced or hash", text);
}

std::string placement_name(PlacementPolicy policy) {
  return policy == PlacementPolicy::Balanced ? "balanced" : "hash";
}

KeyPlacement::KeyPlacement(const ParamArena& arena, const PlacementOptions& options) : options_(options) {
  if (options.shard_count < 1) fail_input("a parameter server needs at least one shard, got {}", options.shard_count);
  if (options.key_float_count < 1) fail_input("ps.key_kb must give at least one float per key");
  const auto& params = arena.params();
  for (size_t p = 0; p < params.size(); ++p) {
    const Param& param = *params[p];
    for (int64_t start = 0; start < param.numel(); start += options.key_float_count) {
      Key key;
      key.id = static_cast<int64_t>(keys_.size());
      key.param = static_cast<int>(p);
      key.param_name = param.name;
      key.param_float_offset = start;
      key.arena_offset = param.offset + start;
      key.float_count = std::min(options.key_float_count, param.numel() - start);
      total_float_count_ += key.float_count;
      keys_.push_back(std::move(key));
    }
  }
  if (options.policy == PlacementPolicy::Balanced) {
    place_balanced(keys_, total_float_count_, options.shard_count);
  } else {
    place_hashed(keys_, options.shard_count);
  }
  keys_of_shard_.assign(static_cast<size_t>(options.shard_count), {});
  float_count_of_shard_.assign(static_cast<size_t>(options.shard_count), 0);
  for (Key& key : keys_) {
    const auto shard = static_cast<size_t>(key.shard);
    key.shard_offset = float_count_of_shard_[shard];
    float_count_of_shard_[shard] += key.float_count;
    keys_of_shard_[shard].push_back(key.id);
  }
}

}  // namespace dtbench
