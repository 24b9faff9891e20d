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

DeviceFactory register_device(const std::string& name, DeviceFactory factory) {
  DTB_CHECK(name != "cpu", "the host device is built in");
  Registry& reg = registry();
  std::lock_guard lock(reg.mutex);
  DeviceFactory replaced;
  if (const auto found = reg.factories.find(name); found != reg.factories.end()) {
    replaced = std::move(found->second);
    reg.factories.erase(found);
  }
  if (factory) reg.factories[name] = std::move(factory);
  return replaced;
}

void check_device_name(const std::string& name, const std::string& where) {
  const auto& known = known_devices();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    fail_input("{}: unknown device '{}'; expected one of {}", where, name, fmt::join(known, ", "));
  }
}

const std::vector<std::string>& known_precisions() {
  static const std::vector<std::string> names{"fp32", "tf32"};
  return names;
}

std::string precision_name(Precision precision) { return known_precisions()[static_cast<size_t>(precision)]; }

Precision parse_precision(const std::string& name, const std::string& where) {
  const auto& known = known_precisions();
  const auto found = std::find(known.begin(), known.end(), name);
  if (found == known.end()) {
    fail_input("{}: unknown precision '{}'; expected one of {}", where, name, fmt::join(known, ", "));
  }
  return static_cast<Precision>(found - known.begin());
}

void check_host_precision(Precision precision, const std::string& where) {
  if (precision == Precision::Fp32) return;
  fail_input("{}: '{}' is not available on device 'cpu', which computes in fp32 only; use precision fp32, or "
             "device cuda on a GPU with TF32 tensor cores",
             where, precision_name(precision));
}

std::unique_ptr<DeviceBackend> open_device(const std::string& name, int local_rank, Precision precision) {
  check_device_name(name, "device");
  if (name == "cpu") {
    check_host_precision(precision, "precision");
    return nullptr;
  }
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
  return factory(local_rank, precision);
}

}  // namespace dtbench
