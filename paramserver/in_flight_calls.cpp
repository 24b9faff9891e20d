#include "paramserver/in_flight_calls.h"

#include <chrono>
#include <mutex>
#include <set>

namespace dtbench {

namespace {

struct Registry {
  std::mutex mutex;
  std::set<grpc::ClientContext*> calls;
  bool cancelled = false;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

InFlightCall::InFlightCall(grpc::ClientContext& context) : context_(context) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.calls.insert(&context_);
  if (r.cancelled) context_.TryCancel();
}

InFlightCall::~InFlightCall() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.calls.erase(&context_);
}

void cancel_in_flight_calls() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.cancelled = true;
  for (grpc::ClientContext* context : r.calls) context->TryCancel();
}

bool in_flight_calls_cancelled() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  return r.cancelled;
}

CancelCallsOnStop::CancelCallsOnStop(std::function<bool()> stop_requested)
    : watcher_([stop_requested = std::move(stop_requested)](std::stop_token stop) {
        while (!stop.stop_requested()) {
          if (stop_requested()) {
            cancel_in_flight_calls();
            return;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      }) {}

CancelCallsOnStop::~CancelCallsOnStop() = default;  // the jthread asks its loop to end and joins

}  // namespace dtbench
