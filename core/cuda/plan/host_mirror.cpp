#include "core/cuda/plan/host_mirror.h"

#include <iterator>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench::cuda_plan {

HostMirrors::HostMirrors(FloatCopy to_device, FloatCopy to_host)
    : copy_to_device_(std::move(to_device)), copy_to_host_(std::move(to_host)) {}

void HostMirrors::add(const float* host, float* device, int64_t count) {
  DTB_CHECK(host != nullptr && device != nullptr && count > 0, "a mirrored block needs memory on both sides");
  std::lock_guard lock(mutex_);
  const auto [where, added] = blocks_.emplace(host, Block{device, count});
  DTB_CHECK(added, "host block {} is mirrored already", fmt::ptr(host));
}

void HostMirrors::remove(const float* host) {
  std::lock_guard lock(mutex_);
  blocks_.erase(host);
}

float* HostMirrors::device_address(const float* host, int64_t count) const {
  std::lock_guard lock(mutex_);
  auto after = blocks_.upper_bound(host);  // the first block starting past `host`
  if (after != blocks_.begin()) {
    const auto& [start, block] = *std::prev(after);
    const int64_t offset = host - start;
    if (offset < block.count) {
      DTB_CHECK(count <= block.count - offset,
                "{} floats at {} run past the end of their mirrored block ({} floats, from {})", count,
                fmt::ptr(host), block.count, fmt::ptr(start));
      return block.device + offset;
    }
  }
  throw LogicError(fmt::format("{} floats at {} are not memory the device backend allocated, so they have no "
                               "copy on the device",
                               count, fmt::ptr(host)));
}

void HostMirrors::to_device(std::span<const float> values) const {
  if (values.empty()) return;
  const auto count = static_cast<int64_t>(values.size());
  copy_to_device_(device_address(values.data(), count), values.data(), count);
}

void HostMirrors::to_host(std::span<float> values) const {
  if (values.empty()) return;
  const auto count = static_cast<int64_t>(values.size());
  copy_to_host_(values.data(), device_address(values.data(), count), count);
}

int64_t HostMirrors::blocks() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(blocks_.size());
}

}  // namespace dtbench::cuda_plan
