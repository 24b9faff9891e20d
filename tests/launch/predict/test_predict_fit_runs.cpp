// What the fit reads from the ranks of a run (launch/predict/fit_runs.h): the part of a rank's wait
// for the last rank that its last allreduce bucket's span holds, and that wait where the ranks did
// not time it, from their compute in each step — each against figures worked by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "launch/predict/fit_runs.h"

namespace dtbench {
namespace {

// A rank's wait for the slowest to arrive counts against its last bucket only for the part the
// bucket's span holds: where the buckets before it took the wait (AlexNet's ring: the faster rank
// waited 42.5 ms, its 9 MB last bucket took 22 ms from its start 205 ms after backward), taking it
// whole made the bucket's own time negative, and the fit, fed a bucket of 1 ns, fell back to a
// latency alone (AlexNet's ring from 2 and 3 hosts to 4: +45.8 %).
TEST(RunFit, OnlyTheWaitTheLastBucketsSpanHoldsIsTakenFromIt) {
  const auto bucket = [](int index, double ready, double start, double end) {
    return MeasuredPiece{.what = "allreduce bucket", .index = index, .ready_s = ready, .start_s = start, .end_s = end};
  };
  // One bucket handed over as backward ends: the whole wait is inside it.
  EXPECT_DOUBLE_EQ(wait_inside_last_bucket({bucket(0, 0.100, 0.100, 0.130)}, 0.020), 0.020);
  // Its start held back 5 ms by the bucket before: 15 ms of the wait inside. The last bucket is
  // the one of the highest index, wherever it lies in the list.
  EXPECT_NEAR(wait_inside_last_bucket({bucket(1, 0.100, 0.105, 0.130), bucket(0, 0.050, 0.050, 0.105)}, 0.020),
              0.015, 1e-12);
  // AlexNet's: the wait over long before the last bucket began.
  EXPECT_DOUBLE_EQ(wait_inside_last_bucket({bucket(2, 0.124, 0.329, 0.351)}, 0.0425), 0.0);
  // A span that ends before the slowest could have the bucket ready holds none of it.
  EXPECT_DOUBLE_EQ(wait_inside_last_bucket({bucket(0, 0.100, 0.100, 0.110)}, 0.020), 0.0);
  // No allreduce bucket (a parameter server's pieces): nothing.
  EXPECT_DOUBLE_EQ(wait_inside_last_bucket({{.what = "push", .index = -1, .end_s = 0.01}}, 0.020), 0.0);
}

// A rank's wait for the last rank, where its run did not time it, from the ranks' compute in each
// step: rank 0 computed 1, 4 and 2 ms, rank 1 3, 1 and 2 — rank 0 waited 2, 0 and 0 ms for rank 1,
// rank 1 0, 3 and 0 for rank 0.
TEST(RunFit, EachRanksWaitForTheLastIsTakenFromTheRanksComputeInEachStep) {
  const std::vector<double> waits = waits_from_step_compute({{1e-3, 4e-3, 2e-3}, {3e-3, 1e-3, 2e-3}});
  ASSERT_EQ(waits.size(), 2u);
  EXPECT_NEAR(waits[0], 2e-3 / 3, 1e-15);
  EXPECT_NEAR(waits[1], 3e-3 / 3, 1e-15);
  // Against a wait drawn by hand per step: three ranks of 200 random steps.
  std::mt19937 random(7);
  std::uniform_real_distribution<double> compute(1e-3, 9e-3);
  std::vector<std::vector<double>> ranks(3, std::vector<double>(200));
  for (auto& rank : ranks) std::generate(rank.begin(), rank.end(), [&] { return compute(random); });
  const std::vector<double> drawn = waits_from_step_compute(ranks);
  for (size_t r = 0; r < ranks.size(); ++r) {
    double by_hand = 0;
    for (size_t i = 0; i < 200; ++i) by_hand += std::max({ranks[0][i], ranks[1][i], ranks[2][i]}) - ranks[r][i];
    EXPECT_NEAR(drawn[r], by_hand / 200, 1e-15) << r;
  }
  // Steps that do not line up (a rank with a step more) say nothing of one another's waits.
  EXPECT_TRUE(waits_from_step_compute({{1e-3, 2e-3}, {1e-3}}).empty());
}

}  // namespace
}  // namespace dtbench
