#include "paramserver/control_store.h"

#include <algorithm>

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
  std::vector<std::pair<ControlWaiter*, std::string>> deliveries;
  {
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
    bool taken = false;
    for (auto it = waiting_.begin(); it != waiting_.end() && !taken;) {
      if (it->name != name) {
        ++it;
        continue;
      }
      taken = it->erase;
      if (taken) {
        deliveries.emplace_back(it->waiter, std::move(value));
      } else {
        deliveries.emplace_back(it->waiter, value);
      }
      it = waiting_.erase(it);
    }
    if (taken) {
      total_bytes_ -= freed;
      if (found != values_.end()) values_.erase(found);
    } else {
      total_bytes_ = total;
      values_[name] = std::move(value);
    }
  }
  // Outside the lock: a delivery ends a gRPC call, which may run its reactor's code at once.
  for (auto& [waiter, delivered] : deliveries) waiter->deliver(std::move(delivered));
  return grpc::Status::OK;
}

std::optional<std::string> ControlStore::fetch(const std::string& name, bool erase) {
  return fetch_or_wait(name, erase, nullptr);
}

std::optional<std::string> ControlStore::fetch_or_wait(const std::string& name, bool erase, ControlWaiter* waiter) {
  std::lock_guard lock(mutex_);
  const auto found = values_.find(name);
  if (found == values_.end()) {
    if (waiter != nullptr) waiting_.push_back({name, erase, waiter});
    return std::nullopt;
  }
  if (!erase) return found->second;
  std::string value = std::move(found->second);
  total_bytes_ -= cost(found->first, value);
  values_.erase(found);
  return value;
}

bool ControlStore::forget(ControlWaiter* waiter) {
  std::lock_guard lock(mutex_);
  const auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Waiting& w) { return w.waiter == waiter; });
  if (it == waiting_.end()) return false;
  waiting_.erase(it);
  return true;
}

int64_t ControlStore::waiting() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(waiting_.size());
}

int64_t ControlStore::total_bytes() const {
  std::lock_guard lock(mutex_);
  return total_bytes_;
}

}  // namespace dtbench
