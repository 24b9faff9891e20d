#pragma once
// A shard's checkpoint: its keys, version, values and optimizer state in one file, written to a
// temporary name and renamed so a crash never leaves half a file.
//
//   "DTBPSCK1"  8 bytes
//   uint64      header_bytes
//   header      JSON: format, shard, shard_count, mode, version, keys [[id, float_count], ...],
//               value_count, optimizer {name, steps, state_count}, payload_fnv1a
//   float32     values[value_count], then optimizer state[state_count]
#include <string>
#include <utility>
#include <vector>

#include "paramserver/ps_mode.h"
#include "paramserver/shard_updater.h"

namespace dtbench {

struct CheckpointHeader {
  int shard = 0;
  int shard_count = 1;
  PsMode mode = PsMode::Sync;
  std::vector<std::pair<int64_t, int64_t>> keys;  // (key id, float count), in key order
};

void write_checkpoint(const std::string& path, const CheckpointHeader& header, const ShardState& state);
// InputError when the file is missing, truncated or corrupt.
std::pair<CheckpointHeader, ShardState> read_checkpoint(const std::string& path);

// An optimizer over state.values.size() floats that continues where the checkpointed one stopped
// (its per-element state and step count, which Adam's bias correction needs).
std::unique_ptr<Optimizer> restore_optimizer(const OptimizerConfig& config, const ShardState& state);

}  // namespace dtbench
