#pragma once
// A deadline for calls that cannot poll: MPI's blocking collectives. Arm it before the call and
// disarm after; if the call is still running at the deadline, or a stop is requested (mpirun's
// SIGTERM) or another rank announces a failure while it runs, the watchdog says what was awaited
// and ends the job, since a blocked collective cannot be cancelled: through `end_job` (which writes
// this rank's report first, job_failure.h), or else MPI_Abort. While armed it also answers other
// ranks' roll calls for the blocked thread. Non-blocking waits (request_wait.h) keep their own
// deadline and need none of this.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace dtbench {

class PeerWatch;

struct WatchdogHooks {
  std::function<bool()> stop_requested;
  PeerWatch* peers = nullptr;
  // Does not return. failed_peer: the rank that announced the failure, or -1.
  std::function<void(const std::string& reason, int failed_peer)> end_job;
};

class Watchdog {
 public:
  explicit Watchdog(WatchdogHooks hooks = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(double timeout_seconds, std::function<std::string()> describe);
  void disarm();

 private:
  void watch();
  // While armed: the reason to end the job now, or "" to go on watching.
  std::string check(std::chrono::steady_clock::time_point armed_at);
  [[noreturn]] void end(const std::string& reason);

  WatchdogHooks hooks_;
  int failed_peer_ = -1;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point deadline_;
  double timeout_seconds_ = 0.0;
  std::function<std::string()> describe_;
  std::thread thread_;
};

// Arms on construction, disarms on destruction.
class WatchdogGuard {
 public:
  WatchdogGuard(Watchdog& watchdog, double timeout_seconds, std::function<std::string()> describe)
      : watchdog_(watchdog) {
    watchdog_.arm(timeout_seconds, std::move(describe));
  }
  ~WatchdogGuard() { watchdog_.disarm(); }
  WatchdogGuard(const WatchdogGuard&) = delete;
  WatchdogGuard& operator=(const WatchdogGuard&) = delete;

 private:
  Watchdog& watchdog_;
};

}  // namespace dtbench
