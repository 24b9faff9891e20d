#include "comm/transport.h"

#include <chrono>

#include "core/util/clock.h"
#include "core/util/hash.h"

namespace dtbench {

uint64_t weights_checksum(std::span<const float> values) { return fnv1a(values); }

SyncTimes Transport::finish_step(Model& model, int64_t step) {
  SyncTimes times;
  const auto sync_start = std::chrono::steady_clock::now();
  synchronize(model, step, times);
  times.comm = seconds_since(sync_start);
  if (times.comm_total == 0.0) times.comm_total = times.comm;  // nothing overlapped
  const auto update_start = std::chrono::steady_clock::now();
  update(model, step);
  times.update = seconds_since(update_start);
  return times;
}

Optimizer& LocalUpdateTransport::optimizer(Model& model) {
  if (optimizer_ == nullptr) optimizer_ = make_optimizer(optimizer_config_, model.arena().count());
  return *optimizer_;
}

void LocalUpdateTransport::update(Model& model, int64_t) {
  ParamArena& arena = model.arena();
  optimizer(model).step(arena.values(), arena.grads());
}

}  // namespace dtbench
