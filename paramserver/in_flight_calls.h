#pragma once
// The gRPC calls a worker has in flight, so that a stop (mpirun's SIGTERM when it ends a job,
// Ctrl-C) can cancel them at once. A worker blocked on a server it can no longer reach then ends
// with an error naming that server and what it waited for, and writes its report, instead of being
// killed silently while its call's deadline is still far off.
#include <functional>
#include <thread>

#include <grpcpp/client_context.h>

namespace dtbench {

// Registers a call's context for its lifetime. A call registered after a stop is cancelled at once.
class InFlightCall {
 public:
  explicit InFlightCall(grpc::ClientContext& context);
  ~InFlightCall();
  InFlightCall(const InFlightCall&) = delete;
  InFlightCall& operator=(const InFlightCall&) = delete;

 private:
  grpc::ClientContext& context_;
};

// Cancels every call in flight now and every later one; true once it has (any thread, not a
// signal handler).
void cancel_in_flight_calls();
bool in_flight_calls_cancelled();

// While it lives, a thread asks `stop_requested` every 20 ms and cancels the calls when it says so
// (a signal handler only sets a flag; cancelling takes locks).
class CancelCallsOnStop {
 public:
  explicit CancelCallsOnStop(std::function<bool()> stop_requested);
  ~CancelCallsOnStop();
  CancelCallsOnStop(const CancelCallsOnStop&) = delete;
  CancelCallsOnStop& operator=(const CancelCallsOnStop&) = delete;

 private:
  std::jthread watcher_;
};

}  // namespace dtbench
