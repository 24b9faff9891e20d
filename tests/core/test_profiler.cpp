#include <gtest/gtest.h>

#include "core/profile/profiler.h"

namespace dtbench {
namespace {

TEST(Summarize, MeanMedianPercentileOfKnownSamples) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);
  const PhaseStats s = summarize(samples);
  EXPECT_DOUBLE_EQ(s.sum, 5050);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.median, 50.5);
  EXPECT_DOUBLE_EQ(s.p95, 95);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(summarize({3, 1, 2}).median, 2);
  EXPECT_DOUBLE_EQ(summarize({}).sum, 0);
}

TEST(Profiler, KeepsEachEpochApart) {
  Profiler profiler;
  profiler.begin_epoch(1);
  StepTimes step;
  step[Phase::Load] = 1;
  step[Phase::Forward] = 2;
  step.total = 3;
  profiler.record(step);
  profiler.record(step);
  EpochPhases first = profiler.end_epoch();
  EXPECT_EQ(first.epoch, 1);
  EXPECT_EQ(first.steps, 2);
  EXPECT_DOUBLE_EQ(first[Phase::Forward].sum, 4);
  EXPECT_DOUBLE_EQ(first.step.mean, 3);
  profiler.begin_epoch(2);
  EXPECT_EQ(profiler.end_epoch().steps, 0);
}

TEST(Profiler, ClockReadIsCheap) {
  const double cost = Profiler::clock_cost_seconds();
  EXPECT_GT(cost, 0.0);
  EXPECT_LT(cost, 5e-6);  // a vDSO read takes tens of nanoseconds; microseconds would be a bug
}

}  // namespace
}  // namespace dtbench
