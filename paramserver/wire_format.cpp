#include "paramserver/wire_format.h"

#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "paramserver/finite_check.h"

namespace dtbench {

namespace {

KeyIndex make_index(const KeyPlacement& placement, int shard, bool arena) {
  KeyIndex index;
  for (int64_t id : placement.keys_of(shard)) {
    const Key& key = placement.keys()[static_cast<size_t>(id)];
    index.position[id] = index.keys.size();
    index.keys.push_back(id);
    index.float_counts.push_back(key.float_count);
    index.offsets.push_back(arena ? key.arena_offset : key.shard_offset);
    index.float_count += key.float_count;
  }
  return index;
}

}  // namespace

KeyIndex KeyIndex::in_arena(const KeyPlacement& placement, int shard) { return make_index(placement, shard, true); }
KeyIndex KeyIndex::in_shard(const KeyPlacement& placement, int shard) { return make_index(placement, shard, false); }

SliceWriter::SliceWriter(const KeyIndex& index, const float* base, int64_t max_message_bytes)
    : index_(index), base_(base),
      max_floats_(std::max<int64_t>(max_message_bytes / static_cast<int64_t>(sizeof(float)), 1)) {}

int64_t SliceWriter::fill(google::protobuf::RepeatedPtrField<ps::KeySlice>* slices) {
  int64_t room = max_floats_;
  int64_t bytes = 0;
  while (!done() && room > 0) {
    const int64_t key_floats = index_.float_counts[key_];
    const int64_t float_count = std::min(room, key_floats - offset_);
    ps::KeySlice* slice = slices->Add();
    slice->set_key(index_.keys[key_]);
    slice->set_float_offset(offset_);
    const float* data = base_ + index_.offsets[key_] + offset_;
    slice->set_data(reinterpret_cast<const char*>(data), static_cast<size_t>(float_count) * sizeof(float));
    bytes += float_count * static_cast<int64_t>(sizeof(float));
    room -= float_count;
    offset_ += float_count;
    if (offset_ == key_floats) {
      ++key_;
      offset_ = 0;
    }
  }
  return bytes;
}

SliceAssembler::SliceAssembler(const KeyIndex& index, float* base, bool require_finite)
    : index_(index), base_(base), require_finite_(require_finite), received_(index.keys.size(), 0) {}

std::string SliceAssembler::absorb(const ps::KeySlice& slice) {
  const std::string& data = slice.data();
  return absorb(slice.key(), slice.float_offset(), data.size(),
                [&](char* target) { std::memcpy(target, data.data(), data.size()); });
}

std::string SliceAssembler::absorb(int64_t key, int64_t float_offset, size_t bytes,
                                   const std::function<void(char*)>& fill) {
  const auto found = index_.position.find(key);
  if (found == index_.position.end()) return fmt::format("key {} does not belong to this shard", key);
  const size_t k = found->second;
  if (bytes % sizeof(float) != 0) {
    return fmt::format("key {}: {} bytes is not a whole number of float32 values", key, bytes);
  }
  const auto float_count = static_cast<int64_t>(bytes / sizeof(float));
  if (float_offset != received_[k]) {
    return fmt::format("key {}: slice starts at float {} but {} floats of it have arrived (slices must come in "
                       "order, once)",
                       key, float_offset, received_[k]);
  }
  if (float_offset + float_count > index_.float_counts[k]) {
    return fmt::format("key {}: wrong length: floats up to {} sent, the key has {}", key, float_offset + float_count,
                       index_.float_counts[k]);
  }
  float* target = base_ + index_.offsets[k] + float_offset;
  fill(reinterpret_cast<char*>(target));
  if (require_finite_) {
    if (const int64_t at = first_non_finite({target, static_cast<size_t>(float_count)}); at >= 0) {
      return fmt::format("key {}: non-finite value {} at float {}", key, target[at], float_offset + at);
    }
  }
  received_[k] += float_count;
  return "";
}

std::string SliceAssembler::incomplete() const {
  std::vector<std::string> missing;
  for (size_t k = 0; k < received_.size(); ++k) {
    if (received_[k] == index_.float_counts[k]) continue;
    if (missing.size() == 5) {
      missing.push_back("...");
      break;
    }
    missing.push_back(fmt::format("key {} ({} of {} floats)", index_.keys[k], received_[k], index_.float_counts[k]));
  }
  return missing.empty() ? "" : fmt::format("incomplete: {}", fmt::join(missing, ", "));
}

}  // namespace dtbench
