#include "paramserver/control_store.h"

namespace dtbench {

ControlStore::~ControlStore() {
  std::lock_guard lock(mutex_);
  values_.clear();
}

void ControlStore::publish(const std::string& name, std::string value) {
  std::lock_guard lock(mutex_);
  values_[name] = std::move(value);
}

std::optional<std::string> ControlStore::fetch(const std::string& name, bool erase) {
  std::lock_guard lock(mutex_);
  const auto found = values_.find(name);
  if (found == values_.end()) return std::nullopt;
  if (!erase) return found->second;
  std::string value = std::move(found->second);
  values_.erase(found);
  return value;
}

}  // namespace dtbench
