#include "allreduce/request_wait.h"

#include <sched.h>

#include <thread>

#include "allreduce/mpi_check.h"
#include "allreduce/peer_watch.h"
#include "core/util/clock.h"
#include "core/util/cpu_quota.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

std::string what(const WaitPolicy& policy) {
  return policy.describe ? policy.describe() : std::string("MPI request");
}

// The error that ends a wait: what was awaited, and when other ranks can be asked, which of them
// are silent (the roll call's grace is short on a stop: mpirun gives a rank one second).
[[noreturn]] void fail_wait(const WaitPolicy& policy, bool stopped) {
  std::string text = stopped ? fmt::format("stopped while waiting: {}", what(policy))
                             : fmt::format("timed out after {:.1f} s: {}", policy.timeout_seconds, what(policy));
  if (policy.peers != nullptr) {
    text += "; " + roll_call_text(*policy.peers, stopped ? 0.2 : roll_call_grace(policy.timeout_seconds));
  }
  throw IoError(text);
}

// Attempts of a wait before it yields between them, and before it sleeps between them.
struct Patience {
  uint64_t busy = 2000;
  uint64_t yielding = 20000;
};

// Polls `done` until it returns true. Spins first (small messages finish in microseconds; for
// policy.spin_seconds at least), then yields, then sleeps briefly so a waiting thread leaves the
// cores to the computation. Under a CPU quota of less than a core it does not spin and yields for
// only 200 attempts: a process alone on its core, whose yields return at once, would poll its
// quota away and be held for the rest of each period — a host of half a core was held in 227 of
// 250 periods of a 3-host allreduce, stalling every rank that waited on it. (200 yields: where
// hosts pair on a core a yield hands it to the other, and 20 made 4 such hosts' 256 KiB ring 13 %
// slower; docs/cluster.md.)
template <typename Poll>
void poll_until(Poll done, const WaitPolicy& policy) {
  static const bool metered = waits_sleep_soon();
  const Patience patience_limits = metered ? Patience{.busy = 0, .yielding = 200} : Patience{};
  const auto start = Clock::now();
  const auto deadline = start + to_duration(policy.timeout_seconds);
  const auto spin_end = start + to_duration(policy.spin_seconds);
  bool spinning = policy.spin_seconds > 0 && !metered;
  uint64_t patience = 0;  // attempts since the spin ended
  auto next_service = start + std::chrono::milliseconds(2);
  for (uint64_t attempt = 0;; ++attempt) {
    if (done()) return;
    // The stop flag is read at every attempt: even a spinning attempt can last a scheduler slice on
    // a loaded machine, since Open MPI yields inside MPI_Test when the ranks outnumber the cores, and
    // mpirun gives a rank one second between SIGTERM and SIGKILL to write its report. The deadline,
    // seconds away, can wait for every 64th attempt and spare the spin most of its clock reads.
    if (policy.stop_requested && policy.stop_requested()) fail_wait(policy, true);
    if (attempt >= 20000 || (attempt & 63) == 0) {
      const auto now = Clock::now();
      if (now > deadline) fail_wait(policy, false);
      // Other ranks' roll calls and failures, every millisecond or so once the wait is not short.
      if (policy.peers != nullptr && now > next_service) {
        policy.peers->service();
        next_service = now + std::chrono::milliseconds(1);
      }
      spinning = spinning && now < spin_end;
    }
    if (spinning || patience++ < patience_limits.busy) continue;
    if (patience < patience_limits.yielding) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

}  // namespace

bool waits_sleep_soon() {
  const double quota = process_cpu_quota_cores();
  return quota > 0 && quota < 1.0;
}

PendingRequests::~PendingRequests() {
  for (MPI_Request& request : requests_) {
    if (request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&request);
    MPI_Request_free(&request);
  }
}

void wait_all(std::span<MPI_Request> requests, const WaitPolicy& policy) {
  if (requests.empty()) return;
  poll_until(
      [&] {
        int flag = 0;
        check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, MPI_STATUSES_IGNORE),
                  "MPI_Testall");
        return flag != 0;
      },
      policy);
}

int wait_any(std::span<MPI_Request> requests, const WaitPolicy& policy) {
  int index = MPI_UNDEFINED;
  poll_until(
      [&] {
        int flag = 0;
        check_mpi(MPI_Testany(static_cast<int>(requests.size()), requests.data(), &index, &flag,
                              MPI_STATUS_IGNORE),
                  "MPI_Testany");
        return flag != 0;
      },
      policy);
  return index == MPI_UNDEFINED ? -1 : index;
}

void wait_until(const std::function<bool()>& done, const WaitPolicy& policy) {
  if (done()) return;
  poll_until(done, policy);
}

}  // namespace dtbench
