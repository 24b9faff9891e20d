#pragma once
// Shard 0's named values for the workers' control channel: Publish stores, Fetch reads. Bounded,
// since any caller with the token could otherwise grow the server without limit: a value holds at
// most kMaxValueBytes, and the store at most kMaxTotalBytes (names, values and a fixed cost per
// entry for the map node); past either, Publish is RESOURCE_EXHAUSTED. A Fetch with erase gives
// the room back. The control channel's values are small: a run directory's path, per-epoch reports.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <grpcpp/support/status.h>

namespace dtbench {

struct ControlLimits {
  int64_t max_value_bytes = int64_t{1} << 20;  // 1 MiB
  int64_t max_name_bytes = 256;
  int64_t max_total_bytes = int64_t{32} << 20;  // 32 MiB
  int64_t entry_overhead_bytes = 256;  // charged per entry: a map node and two strings, roughly
};

class ControlStore {
 public:
  explicit ControlStore(ControlLimits limits = {});
  ~ControlStore();  // takes the lock: the last calls' writes are then visible (and to TSan)
  // RESOURCE_EXHAUSTED (naming the bound) when the value or the store would be too large.
  grpc::Status publish(const std::string& name, std::string value);
  // The value, if published; `erase` forgets it afterwards.
  std::optional<std::string> fetch(const std::string& name, bool erase);
  int64_t total_bytes() const;

 private:
  int64_t cost(const std::string& name, const std::string& value) const;

  const ControlLimits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> values_;
  int64_t total_bytes_ = 0;
};

}  // namespace dtbench
