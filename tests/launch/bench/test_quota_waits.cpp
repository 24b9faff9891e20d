// A rank under a CPU quota of less than a core (a container's limit; the emulated cluster's hosts
// are told theirs in DTBENCH_CPU_QUOTA_CORES) must not poll its quota away while it waits: its wait
// sleeps after a few hundred tries. Counted in tries rather than CPU time, which a busy machine
// blurs: a wait that spins and yields first makes 20,000 tries before its first sleep (and more
// in policy.spin_seconds), one that sleeps soon at most one per 20 µs after its first 200.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "allreduce/request_wait.h"

namespace dtbench {
namespace {

TEST(QuotaWaits, AWaitUnderLessThanACoreSleepsAfterAFewTries) {
  setenv("DTBENCH_CPU_QUOTA_CORES", "0.5", 1);  // before this process's first wait: it is read once
  ASSERT_TRUE(waits_sleep_soon());
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  int64_t tries = 0;
  wait_until(
      [&] {
        ++tries;
        return std::chrono::steady_clock::now() >= until;
      },
      {.timeout_seconds = 10.0, .spin_seconds = 0.01});  // a spin the quota must override
  EXPECT_LT(tries, 20000) << "a 200 ms wait under half a core polled instead of sleeping";
  EXPECT_GT(tries, 200);
}

}  // namespace
}  // namespace dtbench
