#pragma once
// Which server holds which part of the model. The parameters, in the arena's layer order, are cut
// into KEYS — one per parameter, a large parameter cut into ranges of at most key_float_count
// floats — and the keys are dealt to the shards:
//
//   balanced: contiguous runs of keys of about equal size (total / shards floats each, off by at
//             most one key), so each server owns one contiguous stretch of the model;
//   hash:     shard = FNV-1a(parameter name, range index) mod shards — independent of the other
//             parameters, so adding a layer moves only its own keys.
//
// Every worker and server computes the placement from the same model and options, so they agree
// without talking; registration checks that they do.
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor/param_arena.h"

namespace dtbench {

enum class PlacementPolicy { Balanced, Hash };

PlacementPolicy parse_placement(const std::string& text);  // "balanced" | "hash"
std::string placement_name(PlacementPolicy policy);

struct PlacementOptions {
  int shard_count = 1;
  int64_t key_float_count = 64 * 1024;  // 256 KiB of floats
  PlacementPolicy policy = PlacementPolicy::Balanced;
};

struct Key {
  int64_t id = 0;            // index in KeyPlacement::keys()
  int param = 0;             // index in the arena's parameters
  std::string param_name;
  int64_t param_float_offset = 0;  // where the key starts inside its parameter
  int64_t arena_offset = 0;  // where it starts in the arena's value / gradient blocks
  int64_t float_count = 0;
  int shard = 0;
  int64_t shard_offset = 0;  // where it starts in its shard's contiguous value block
};

class KeyPlacement {
 public:
  KeyPlacement(const ParamArena& arena, const PlacementOptions& options);

  const PlacementOptions& options() const { return options_; }
  const std::vector<Key>& keys() const { return keys_; }
  // The ids of `shard`'s keys in key order; their values lie back to back in that order.
  const std::vector<int64_t>& keys_of(int shard) const { return keys_of_shard_.at(static_cast<size_t>(shard)); }
  int64_t float_count_of(int shard) const { return float_count_of_shard_.at(static_cast<size_t>(shard)); }
  int64_t total_float_count() const { return total_float_count_; }

 private:
  PlacementOptions options_;
  std::vector<Key> keys_;
  std::vector<std::vector<int64_t>> keys_of_shard_;
  std::vector<int64_t> float_count_of_shard_;
  int64_t total_float_count_ = 0;
};

}  // namespace dtbench
