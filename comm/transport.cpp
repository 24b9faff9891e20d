#include "comm/transport.h"

#include <algorithm>
#include <chrono>

#include "core/device/device.h"
#include "core/util/clock.h"
#include "core/util/hash.h"

namespace dtbench {

uint64_t weights_checksum(std::span<const float> values) { return fnv1a(values); }

namespace {

template <typename Work>
double timed(Work&& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return seconds_since(start);
}

}  // namespace

void Transport::start(Model& model) {
  begin(model);
  if (DeviceBackend* device = model.device(); device != nullptr && synchronizes_on_host()) {
    device->move_to_device(model.arena().values());
  }
}

void Transport::stop(Model& model) {
  if (DeviceBackend* device = model.device()) device->move_to_host(model.arena().values());
  end(model);
}

SyncTimes Transport::finish_step(Model& model, int64_t step) {
  SyncTimes times;
  DeviceBackend* device = synchronizes_on_host() ? model.device() : nullptr;
  const auto sync_start = std::chrono::steady_clock::now();
  if (device != nullptr) {
    const std::span<float> read = read_by_synchronize(model);
    if (!read.empty()) times.d2h = timed([&] { device->move_to_host(read); });
  }
  synchronize(model, step, times);
  if (device != nullptr) times.h2d = timed([&] { device->move_to_device(written_by_synchronize(model)); });
  times.comm = seconds_since(sync_start);
  // Derived here, from one clock read, so that the parts add up whatever the scheduler did between
  // the transport's own clock reads: the exposed time lies within the total, and wait + transfer
  // is the total.
  times.comm_total = times.hidden + times.comm;
  times.wait = std::min(times.wait, times.comm);
  times.transfer = times.comm_total - times.wait;
  const auto update_start = std::chrono::steady_clock::now();
  update(model, step);
  times.update = seconds_since(update_start);
  return times;
}

Optimizer& LocalUpdateTransport::optimizer(Model& model) {
  if (optimizer_ == nullptr && model.device() != nullptr) {
    optimizer_ = model.device()->make_optimizer(optimizer_config_, model.arena().count());
  }
  if (optimizer_ == nullptr) optimizer_ = make_optimizer(optimizer_config_, model.arena().count());
  return *optimizer_;
}

void LocalUpdateTransport::update(Model& model, int64_t) {
  ParamArena& arena = model.arena();
  optimizer(model).step(arena.values(), arena.grads());
}

}  // namespace dtbench
