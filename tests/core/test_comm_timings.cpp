// Each communication piece's ready, start and end over an epoch: means over the steps, from each
// step's own backward start, pieces kept apart by name and bucket in the order they first came.
#include <gtest/gtest.h>

#include "core/profile/comm_timings.h"

namespace dtbench {
namespace {

using std::chrono::microseconds;

TEST(CommTimings, MeansFromEachStepsBackwardStartPerPiece) {
  const auto origin = std::chrono::steady_clock::time_point{} + std::chrono::seconds(100);
  const auto at = [&](int64_t us) { return origin + microseconds(us); };
  CommTimings timings;
  // Step 1, backward from 0: bucket 1 first (backward runs back to front), then bucket 0.
  const CommSpan first[] = {{"allreduce bucket", 1, 4096, at(200), at(200), at(500)},
                            {"allreduce bucket", 0, 8192, at(900), at(950), at(1300)}};
  timings.record(at(0), first);
  // Step 2, backward from 10,000 us: the same pieces 100 us later each.
  const CommSpan second[] = {{"allreduce bucket", 1, 4096, at(10300), at(10300), at(10600)},
                             {"allreduce bucket", 0, 8192, at(11000), at(11050), at(11400)}};
  timings.record(at(10000), second);

  const auto means = timings.means();
  ASSERT_EQ(means.size(), 2u);
  EXPECT_EQ(means[0].index, 1);
  EXPECT_EQ(means[0].bytes, 4096);
  EXPECT_EQ(means[0].steps, 2);
  EXPECT_NEAR(means[0].ready_s, 250e-6, 1e-12);
  EXPECT_NEAR(means[0].start_s, 250e-6, 1e-12);
  EXPECT_NEAR(means[0].end_s, 550e-6, 1e-12);
  EXPECT_EQ(means[1].index, 0);
  EXPECT_NEAR(means[1].ready_s, 950e-6, 1e-12);
  EXPECT_NEAR(means[1].start_s, 1000e-6, 1e-12);
  EXPECT_NEAR(means[1].end_s, 1350e-6, 1e-12);

  // Pieces of one name but no bucket (a parameter server's) are told apart by name.
  timings.clear();
  const CommSpan ps[] = {{"push", -1, 100, at(10), at(10), at(20)}, {"pull", -1, 100, at(30), at(30), at(50)}};
  timings.record(at(0), ps);
  ASSERT_EQ(timings.means().size(), 2u);
  EXPECT_EQ(timings.means()[1].what, "pull");
  EXPECT_NEAR(timings.means()[1].end_s, 50e-6, 1e-12);
}

}  // namespace
}  // namespace dtbench
