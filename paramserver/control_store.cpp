#include "paramserver/control_store.h"

#include <fmt/format.h>

#include "paramserver/echo.h"

namespace dtbench {

namespace {

std::string mib(int64_t bytes) {
  const double value = static_cast<double>(bytes) / (1 << 20);
  return value == static_cast<double>(static_cast<int64_t>(value)) ? fmt::format("{} MiB", static_cast<int64_t>(value))
                                                                   : fmt::format("{:.2f} MiB", value);
}

}  // namespace

ControlStore::ControlStore(ControlLimits limits) : limits_(limits) {}

ControlStore::~ControlStore() {
  std::lock_guard lock(mutex_);
  values_.clear();
}

int64_t ControlStore::cost(const std::string& name, const std::string& value) const {
  return static_cast<int64_t>(name.size() + value.size()) + limits_.entry_overhead_bytes;
}

grpc::Status ControlStore::publish(const std::string& name, std::string value) {
  if (static_cast<int64_t>(name.size()) > limits_.max_name_bytes) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            fmt::format("Publish '{}': a name may have at most {} bytes, this one has {}", echo(name),
                        limits_.max_name_bytes, name.size())};
  }
  if (static_cast<int64_t>(value.size()) > limits_.max_value_bytes) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            fmt::format("Publish '{}': a value may hold at most {}, this one has {} bytes", echo(name),
                        mib(limits_.max_value_bytes), value.size())};
  }
  std::lock_guard lock(mutex_);
  const auto found = values_.find(name);
  const int64_t freed = found == values_.end() ? 0 : cost(found->first, found->second);
  const int64_t total = total_bytes_ - freed + cost(name, value);
  if (total > limits_.max_total_bytes) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            fmt::format("Publish '{}': the control store holds at most {} per run and has {} in {} value(s); a "
                        "Fetch with erase frees room",
                        echo(name), mib(limits_.max_total_bytes), mib(total_bytes_), values_.size())};
  }
  total_bytes_ = total;
  values_[name] = std::move(value);
  return grpc::Status::OK;
}

std::optional<std::string> ControlStore::fetch(const std::string& name, bool erase) {
  std::lock_guard lock(mutex_);
  const auto found = values_.find(name);
  if (found == values_.end()) return std::nullopt;
  if (!erase) return found->second;
  std::string value = std::move(found->second);
  total_bytes_ -= cost(found->first, value);
  values_.erase(found);
  return value;
}

int64_t ControlStore::total_bytes() const {
  std::lock_guard lock(mutex_);
  return total_bytes_;
}

}  // namespace dtbench
