#include "allreduce/watchdog.h"

#include <mpi.h>

#include <spdlog/spdlog.h>

#include "core/util/clock.h"

namespace dtbench {

Watchdog::Watchdog() : thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void Watchdog::arm(double timeout_seconds, std::function<std::string()> describe) {
  {
    std::lock_guard lock(mutex_);
    armed_ = true;
    timeout_seconds_ = timeout_seconds;
    deadline_ = std::chrono::steady_clock::now() + to_duration(timeout_seconds);
    describe_ = std::move(describe);
  }
  changed_.notify_all();
}

void Watchdog::disarm() {
  {
    std::lock_guard lock(mutex_);
    armed_ = false;
  }
  changed_.notify_all();
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || armed_; });
    if (stopping_) return;
    if (changed_.wait_until(lock, deadline_, [&] { return stopping_ || !armed_; })) continue;
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    spdlog::error("rank {}: timed out after {:.1f} s in a blocking MPI call: {}; ending the job", rank,
                  timeout_seconds_, describe_ ? describe_() : std::string("MPI call"));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

}  // namespace dtbench
