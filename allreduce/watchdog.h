#pragma once
// A deadline for calls that cannot poll: MPI's blocking collectives. Arm it before the call and
// disarm after; if the call is still running at the deadline the watchdog logs what was awaited
// and ends the job (MPI_Abort), since a blocked collective cannot be cancelled. Non-blocking
// waits (request_wait.h) keep their own deadline and need none of this.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace dtbench {

class Watchdog {
 public:
  Watchdog();
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void arm(double timeout_seconds, std::function<std::string()> describe);
  void disarm();

 private:
  void watch();

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
