#pragma once
// Shard 0's named values for the workers' control channel: Publish stores, Fetch reads. Bounded,
// since any caller with the token could otherwise grow the server without limit: a value holds at
// most kMaxValueBytes, and the store at most kMaxTotalBytes (names, values and a fixed cost per
// entry for the map node); past either, Publish is RESOURCE_EXHAUSTED. A Fetch with erase gives
// the room back. The control channel's values are small: a run directory's path, per-epoch reports.
//
// A Fetch may wait for its name (a barrier's waiters, a worker waiting for rank 0's broadcast): the
// store keeps the waiter and hands it the value when it is published, so it wakes at once rather
// than at its next poll.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

namespace dtbench {

struct ControlLimits {
  int64_t max_value_bytes = int64_t{1} << 20;  // 1 MiB
  int64_t max_name_bytes = 256;
  int64_t max_total_bytes = int64_t{32} << 20;  // 32 MiB
  int64_t entry_overhead_bytes = 256;  // charged per entry: a map node and two strings, roughly
};

// A Fetch waiting for a name to be published.
class ControlWaiter {
 public:
  virtual ~ControlWaiter() = default;
  // The value, once it is published: called once, outside the store's lock.
  virtual void deliver(std::string value) = 0;
};

class ControlStore {
 public:
  explicit ControlStore(ControlLimits limits = {});
  ~ControlStore();  // takes the lock: the last calls' writes are then visible (and to TSan)
  // RESOURCE_EXHAUSTED (naming the bound) when the value or the store would be too large.
  grpc::Status publish(const std::string& name, std::string value);
  // The value, if published; `erase` forgets it afterwards.
  std::optional<std::string> fetch(const std::string& name, bool erase);
  // The value if published (as fetch); else `waiter` (unless null) waits for it: the publish of `name` delivers it
  // to every waiter in the order they came, until one that erases takes it (the rest go on waiting).
  std::optional<std::string> fetch_or_wait(const std::string& name, bool erase, ControlWaiter* waiter);
  // Whether `waiter` was still waiting; it no longer is (its call was cancelled, or ended).
  bool forget(ControlWaiter* waiter);
  int64_t total_bytes() const;
  int64_t waiting() const;

 private:
  struct Waiting {
    std::string name;
    bool erase = false;
    ControlWaiter* waiter = nullptr;
  };
  int64_t cost(const std::string& name, const std::string& value) const;

  const ControlLimits limits_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> values_;
  std::vector<Waiting> waiting_;  // in arrival order: few at a time (a run's workers)
  int64_t total_bytes_ = 0;
};

}  // namespace dtbench
