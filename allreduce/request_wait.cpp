#include "allreduce/request_wait.h"

#include <sched.h>

#include <thread>

#include "allreduce/mpi_check.h"
#include "core/util/clock.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

// Polls `done` until it returns true. Spins first (small messages finish in microseconds), then
// yields, then sleeps briefly so a waiting thread leaves the cores to the computation.
template <typename Poll>
void poll_until(Poll done, const WaitPolicy& policy) {
  const auto start = Clock::now();
  const auto deadline = start + to_duration(policy.timeout_seconds);
  for (uint64_t attempt = 0;; ++attempt) {
    if (done()) return;
    // The stop flag is read at every attempt: even a spinning attempt can last a scheduler slice on
    // a loaded machine, since Open MPI yields inside MPI_Test when the ranks outnumber the cores, and
    // mpirun gives a rank one second between SIGTERM and SIGKILL to write its report. The deadline,
    // seconds away, can wait for every 64th attempt and spare the spin most of its clock reads.
    if (policy.stop_requested && policy.stop_requested()) {
      throw IoError(fmt::format("stopped while waiting: {}",
                                policy.describe ? policy.describe() : std::string("MPI request")));
    }
    if ((attempt & 63) == 0 && Clock::now() > deadline) {
      throw IoError(fmt::format("timed out after {:.1f} s: {}", policy.timeout_seconds,
                                policy.describe ? policy.describe() : std::string("MPI request")));
    }
    if (attempt < 2000) continue;
    if (attempt < 20000) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
}

}  // namespace

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

}  // namespace dtbench
