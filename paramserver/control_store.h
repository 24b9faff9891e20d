#pragma once
// Shard 0's named values for the workers' control channel: Publish stores, Fetch reads.
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace dtbench {

class ControlStore {
 public:
  ControlStore() = default;
  ~ControlStore();  // takes the lock: the last calls' writes are then visible (and to TSan)
  void publish(const std::string& name, std::string value);
  // The value, if published; `erase` forgets it afterwards.
  std::optional<std::string> fetch(const std::string& name, bool erase);

 private:
  std::mutex mutex_;
  std::map<std::string, std::string> values_;
};

}  // namespace dtbench
