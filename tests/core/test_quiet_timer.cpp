// The quiet timer (core/tuning/quiet_timer.h): a timing is disturbed when another task held the
// timing's core for a real share of it, and not when the core was only taken for moments, as a
// kernel thread's wake-ups take it on an idle machine. Each test pins itself to one CPU and puts a
// process of its own beside it there, so what it asserts does not depend on the machine's load
// (the file runs alone: tests/CMakeLists.txt).
#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "core/tuning/quiet_timer.h"

namespace dtbench {
namespace {

using Clock = std::chrono::steady_clock;

void spin_for(std::chrono::microseconds duration) {
  const auto end = Clock::now() + duration;
  while (Clock::now() < end) {
  }
}

// Pins the calling thread to the CPU it is on, and gives it back its CPUs afterwards.
class PinnedToOneCpu {
 public:
  PinnedToOneCpu() : cpu_(sched_getcpu()) {
    sched_getaffinity(0, sizeof saved_, &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu_, &one);
    EXPECT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  }
  ~PinnedToOneCpu() { sched_setaffinity(0, sizeof saved_, &saved_); }
  PinnedToOneCpu(const PinnedToOneCpu&) = delete;
  PinnedToOneCpu& operator=(const PinnedToOneCpu&) = delete;
  int cpu() const { return cpu_; }

 private:
  int cpu_;
  cpu_set_t saved_{};
};

// A child process on `cpu` that runs `busy` out of every `period` (a zero period: all the time).
class Neighbour {
 public:
  Neighbour(int cpu, std::chrono::microseconds busy, std::chrono::microseconds period)
      : parent_(getpid()), pid_(fork()) {
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);  // killed with the test, even where it is killed itself
      if (getppid() != parent_) _exit(0);  // the test died before the line above
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      for (;;) {
        if (period.count() == 0) continue;
        std::this_thread::sleep_for(period - busy);
        spin_for(busy);
      }
    }
    EXPECT_GT(pid_, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // it is running
  }
  ~Neighbour() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Neighbour(const Neighbour&) = delete;
  Neighbour& operator=(const Neighbour&) = delete;

 private:
  pid_t parent_;
  pid_t pid_;
};

long involuntary_switches_of_this_thread() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nivcsw;
}

TEST(QuietTimer, AProcessRunningOnTheTimingsCoreDisturbsIt) {
  const PinnedToOneCpu pinned;
  const Neighbour busy(pinned.cpu(), std::chrono::microseconds(0), std::chrono::microseconds(0));
  for (int timing = 0; timing < 3; ++timing) {
    const QuietTiming t = time_quietly([] { spin_for(std::chrono::milliseconds(30)); });
    EXPECT_TRUE(t.disturbed) << "a 30 ms timing sharing its core took " << t.ms << " ms";
  }
}

// A neighbour that wakes every 4 ms for 30 us preempts the timing several times in 20 ms (an
// involuntary context switch each time, which the timer once counted as disturbed) but holds the
// core for well under 2 % of it.
TEST(QuietTimer, MomentsTakenFromTheTimingsCoreDoNotDisturbIt) {
  const PinnedToOneCpu pinned;
  const Neighbour waking(pinned.cpu(), std::chrono::microseconds(30), std::chrono::microseconds(4000));
  int undisturbed = 0, undisturbed_though_preempted = 0;
  const int timings = 10;
  for (int timing = 0; timing < timings; ++timing) {
    const long switches_before = involuntary_switches_of_this_thread();
    const QuietTiming t = time_quietly([] { spin_for(std::chrono::milliseconds(20)); });
    const bool preempted = involuntary_switches_of_this_thread() != switches_before;
    undisturbed += !t.disturbed;
    undisturbed_though_preempted += !t.disturbed && preempted;
  }
  EXPECT_GE(undisturbed, timings / 2);
  EXPECT_GE(undisturbed_though_preempted, 1) << "the neighbour never preempted a timing that counted";
}

TEST(QuietTimer, WaitsCountAboveTwoPercentOfTheWallTime) {
  const CpuLoss before{.from_wait = true, .waited_ns = 5e6};
  EXPECT_FALSE(lost_the_cpu(before, CpuLoss{.from_wait = true, .waited_ns = 5e6 + 1.9e6}, 100e6));
  EXPECT_TRUE(lost_the_cpu(before, CpuLoss{.from_wait = true, .waited_ns = 5e6 + 2.1e6}, 100e6));
  // Without the kernel's schedstat, any involuntary switch counts.
  const CpuLoss switches{.involuntary_switches = 7};
  EXPECT_FALSE(lost_the_cpu(switches, CpuLoss{.involuntary_switches = 7}, 100e6));
  EXPECT_TRUE(lost_the_cpu(switches, CpuLoss{.involuntary_switches = 8}, 100e6));
}

}  // namespace
}  // namespace dtbench
