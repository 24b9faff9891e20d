#pragma once
// Waiting on MPI requests without hanging: every wait polls with a deadline and a stop flag, so
// a dead or stalled peer ends the run with an error in bounded time instead of blocking forever.
#include <mpi.h>

#include <chrono>
#include <functional>
#include <span>
#include <string>

namespace dtbench {

class PeerWatch;

struct WaitPolicy {
  double timeout_seconds = 60.0;
  std::function<bool()> stop_requested{};  // e.g. a signal arrived
  // Describes what is being waited for, for the error message ("ring step 2: receive from rank 1").
  std::function<std::string()> describe{};
  // When set, the wait answers other ranks' roll calls, ends with PeerFailure when another rank
  // announced a failure, and on a timeout or stop calls the roll itself to name the silent ranks.
  PeerWatch* peers = nullptr;
  // How long a wait spins before it starts yielding the core. Spinning keeps the core, and the
  // scheduler's slice, while a yield on a busy machine hands it to another process for a whole
  // slice (milliseconds): worth it when the waiting thread has a core of its own that nothing else
  // of the run needs (not the overlap thread, which shares its core with backward).
  double spin_seconds = 0.0;
};

// Cancels and frees the requests still pending when it goes out of scope — after a timeout or an
// error — so a failed collective leaves no receive posted into buffers that are about to go away.
class PendingRequests {
 public:
  explicit PendingRequests(std::span<MPI_Request> requests) : requests_(requests) {}
  ~PendingRequests();
  PendingRequests(const PendingRequests&) = delete;
  PendingRequests& operator=(const PendingRequests&) = delete;

 private:
  std::span<MPI_Request> requests_;
};

// Whether this process's waits sleep after a few attempts instead of spinning and yielding: it
// runs under a CPU quota of less than a core (core/util/cpu_quota.h: a container's limit, an
// emulated host of half a core), where a waiting thread's polling spends the computation's share.
// policy.spin_seconds is then ignored.
bool waits_sleep_soon();

// Waits until every request completes. IoError on timeout or stop, naming what was awaited.
void wait_all(std::span<MPI_Request> requests, const WaitPolicy& policy);

// Waits until one of `requests` completes and returns its index, or -1 when all are done.
int wait_any(std::span<MPI_Request> requests, const WaitPolicy& policy);

// Waits until `done()` returns true (a flag another process sets in shared memory, say), under the
// same deadline, stop flag and peer watch as the waits on requests. IoError on timeout or stop.
void wait_until(const std::function<bool()>& done, const WaitPolicy& policy);

}  // namespace dtbench
