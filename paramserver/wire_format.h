#pragma once
// Moving a shard's floats through messages of at most about max_message_bytes: a SliceWriter cuts
// the keys into KeySlices, a SliceAssembler puts received slices back and checks them (each key's
// slices in order, no gaps, no overlap, nothing past the key's end, optionally no NaN / Inf).
// The same code serves both directions: workers push gradients and servers stream values.
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "paramserver/key_placement.h"
#include "paramserver/ps.pb.h"

namespace dtbench {

// Messages stay below this (plus a few bytes of header), far from gRPC's 4 MB default limit.
constexpr int64_t kDefaultMaxMessageBytes = 1 << 20;

// One shard's keys and where each lies in some buffer (the arena on a worker, the shard's own
// block on a server).
struct KeyIndex {
  std::vector<int64_t> keys;          // key ids, in key order
  std::vector<int64_t> float_counts;  // per key
  std::vector<int64_t> offsets;       // per key, in floats from the buffer's start
  std::unordered_map<int64_t, size_t> position;  // key id -> index in the vectors above
  int64_t float_count = 0;            // sum of float_counts

  // `shard`'s keys located in the arena (worker) or in the shard's own block (server).
  static KeyIndex in_arena(const KeyPlacement& placement, int shard);
  static KeyIndex in_shard(const KeyPlacement& placement, int shard);
};

class SliceWriter {
 public:
  SliceWriter(const KeyIndex& index, const float* base, int64_t max_message_bytes);
  bool done() const { return key_ >= index_.keys.size(); }
  // Appends slices until about max_message_bytes are in `slices` or every key is written.
  // Returns the payload bytes added.
  int64_t fill(google::protobuf::RepeatedPtrField<ps::KeySlice>* slices);

 private:
  const KeyIndex& index_;
  const float* base_;
  int64_t max_floats_;
  size_t key_ = 0;
  int64_t offset_ = 0;  // inside the current key
};

class SliceAssembler {
 public:
  SliceAssembler(const KeyIndex& index, float* base, bool require_finite);
  // "" when the slice fits; otherwise what is wrong with it (and nothing was written for it
  // beyond the buffer it targets).
  std::string absorb(const ps::KeySlice& slice);
  // The same for a slice of `bytes` bytes read in place: `fill(target)` copies them to `target`
  // once the slice has been found to fit.
  std::string absorb(int64_t key, int64_t float_offset, size_t bytes, const std::function<void(char*)>& fill);
  // "" when every key has all its floats; otherwise which are missing.
  std::string incomplete() const;

 private:
  const KeyIndex& index_;
  float* base_;
  bool require_finite_;
  std::vector<int64_t> received_;  // floats so far, per key
};

}  // namespace dtbench
