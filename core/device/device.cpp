#include "core/device/device.h"

#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/util/error.h"

namespace dtbench {

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, DeviceFactory> factories;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

const std::vector<std::string>& known_devices() {
  static const std::vector<std::string> names{"cpu", "cuda"};
  return names;
}

std::vector<std::string> built_devices() {
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  std::vector<std::string> names{"cpu"};
  for (const auto& [name, factory] : reg.factories) names.push_back(name);
  return names;
}

void register_device(const std::string& name, DeviceFactory factory) {
  DTB_CHECK(name != "cpu", "the host device is built in");
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  reg.factories[name] = std::move(factory);
}

void check_device_name(const std::string& name, const std::string& where) {
  const auto& known = known_devices();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    fail_input("{}: unknown device '{}'; expected one of {}", where, name, fmt::join(known, ", "));
  }
}

std::unique_ptr<DeviceBackend> open_device(const std::string& name, int local_rank) {
  check_device_name(name, "device");
  if (name == "cpu") return nullptr;
  DeviceFactory factory;
  {
    Registry& reg = registry();
    std::lock_guard lock(reg.mutex);
    const auto found = reg.factories.find(name);
    if (found != reg.factories.end()) factory = found->second;
  }
  if (!factory) {
    fail_input("device '{}': this dtbench was built without it (devices built: {}); build on a machine "
               "with the CUDA toolkit, cuDNN and NCCL (cmake -DDTBENCH_CUDA=ON)",
               name, fmt::join(built_devices(), ", "));
  }
  return factory(local_rank);
}

}  // namespace dtbench
