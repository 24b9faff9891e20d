#pragma once
// A shard's checkpoint: its keys, version, values and optimizer state in one file, written to a
// temporary name and renamed so a crash never leaves half a file.
//
//   "DTBPSCK2"  8 bytes
//   uint64      header_bytes (at most 64 MiB)
//   header      JSON: format (2), shard, shard_count, mode, version, keys [[id, float_count], ...],
//               value_count, optimizer {name, steps, state_count}
//   float32     values[value_count], then optimizer state[state_count]
//   uint64      FNV-1a of the header's bytes, then the values', then the state's
//
// The header is read from a file anyone may have edited: every field is range-checked, and the
// sizes against the file's own length, before anything is allocated; the checksum covers the
// header too (format 1's covered only the payload, so it is refused).
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

// The largest version (and optimizer step count) a checkpoint may hold: 2^53, the largest integer
// every JSON reader keeps exactly; a run of a billion updates a second would need 100 days.
constexpr int64_t kMaxCheckpointVersion = int64_t{1} << 53;

void write_checkpoint(const std::string& path, const CheckpointHeader& header, const ShardState& state);
// InputError naming the file (and the field) when it is missing, truncated, corrupt or out of range.
std::pair<CheckpointHeader, ShardState> read_checkpoint(const std::string& path);

// An optimizer over state.values.size() floats that continues where the checkpointed one stopped
// (its per-element state and step count, which Adam's bias correction needs).
std::unique_ptr<Optimizer> restore_optimizer(const OptimizerConfig& config, const ShardState& state);

}  // namespace dtbench
