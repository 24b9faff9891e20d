#include "allreduce/watchdog.h"

#include <mpi.h>

#include <cstdlib>

#include <spdlog/spdlog.h>

#include "allreduce/peer_watch.h"
#include "core/util/clock.h"

namespace dtbench {

Watchdog::Watchdog(WatchdogHooks hooks) : hooks_(std::move(hooks)), thread_([this] { watch(); }) {}

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
    const auto armed_at = std::chrono::steady_clock::now();
    // Wakes every few milliseconds while armed: a stop and another rank's roll call cannot wait for
    // the deadline. Most calls end before the first wake-up.
    while (!changed_.wait_for(lock, std::chrono::milliseconds(5), [&] { return stopping_ || !armed_; })) {
      std::string reason = check(armed_at);
      if (!reason.empty()) end(reason);
    }
  }
}

std::string Watchdog::check(std::chrono::steady_clock::time_point armed_at) {
  const auto now = std::chrono::steady_clock::now();
  const std::string what = describe_ ? describe_() : std::string("MPI call");
  const bool stopped = hooks_.stop_requested && hooks_.stop_requested();
  if (!stopped && now < deadline_) {
    if (hooks_.peers != nullptr && now - armed_at > std::chrono::milliseconds(20)) {
      try {
        hooks_.peers->service();
      } catch (const PeerFailure& failure) {
        failed_peer_ = failure.rank();
        return fmt::format("{}; this rank was blocked in {}", failure.what(), what);
      }
    }
    return "";
  }
  std::string reason = stopped ? fmt::format("stopped while blocked in {}", what)
                               : fmt::format("timed out after {:.1f} s in a blocking MPI call: {}", timeout_seconds_, what);
  if (hooks_.peers != nullptr) {
    reason += "; " + roll_call_text(*hooks_.peers, stopped ? 0.2 : roll_call_grace(timeout_seconds_));
  }
  return reason;
}

void Watchdog::end(const std::string& reason) {
  if (hooks_.end_job) hooks_.end_job(reason, failed_peer_);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  spdlog::error("rank {}: {}; ending the job", rank, reason);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

}  // namespace dtbench
