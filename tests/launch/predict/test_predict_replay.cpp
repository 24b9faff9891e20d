// The replay of N ranks' steps (replay.h) against figures worked by hand, and its random draws
// against the exact order statistic (order_statistic.h), an independent computation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/util/error.h"
#include "launch/predict/order_statistic.h"
#include "launch/predict/backward_sharing.h"
#include "launch/predict/replay.h"

namespace dtbench {
namespace {

// Compute phases of 20 ms: forward and update 5 ms each around 10 ms of backward, so a rank
// drawing x starts backward at x/2 and ends it at x. One bucket of 1 MiB.
Workload one_bucket(bool overlap, double ready) {
  return {.compute = {.forward_s = 0.005, .backward_s = 0.010, .update_s = 0.005},
          .bucket_bytes = {1 << 20}, .bucket_ready = {ready}, .overlap = overlap, .gradient_bytes = 1 << 20};
}

// A line of 1 ms a ring step and no bandwidth term: 2(N-1) ms an allreduce.
NetworkConstants steps_of_a_millisecond() {
  return {.alpha_s = 0.001, .beta_bytes_per_s = std::numeric_limits<double>::infinity()};
}

TEST(Replay, AfterBackwardTheStepWaitsForTheSlowestRankWhole) {
  // Two ranks drawing 10 or 30 ms: the slowest is 10 ms with chance 1/4, else 30 — 25 ms on
  // average; the bucket (2 ms at 2 ranks) after it.
  const ReplayedSteps two = replay_allreduce_steps(one_bucket(false, 1.0), {0.010, 0.030}, 2,
                                                   steps_of_a_millisecond());
  EXPECT_NEAR(two.step_s, 0.025 + 0.002, 1e-12);
  EXPECT_NEAR(two.compute_s, 0.020, 1e-12);
  ASSERT_EQ(two.bucket_end_s.size(), 1u);
  EXPECT_NEAR(two.bucket_end_s[0], 0.027, 1e-12);
  EXPECT_NEAR(two.comm_total_s, 0.002, 1e-12);
}

TEST(Replay, ASlowRankCostsOnlyWhatTheCommunicationDoesNotAlreadyWait) {
  // The bucket ready a fifth into backward (0.6 x), reduced beside it, and long: 4 ranks, 6 ring
  // steps of 10 ms. The step is 0.6 of the slowest rank's compute and the 60 ms allreduce, not
  // the slowest compute whole and the allreduce's part after the mean rank's backward.
  NetworkConstants c = steps_of_a_millisecond();
  c.alpha_s = 0.010;
  c.step_overhead_s = 0.0005;
  const ReplayedSteps four = replay_allreduce_steps(one_bucket(true, 0.2), {0.010, 0.030}, 4, c);
  const double slowest = 0.030 - 0.020 / 16;  // of 4 draws
  EXPECT_NEAR(four.step_s, 0.6 * slowest + 0.060 + 0.0005, 1e-12);
  // A bucket short enough to finish under the slowest rank's backward leaves that rank's compute.
  c.alpha_s = 0.0001;
  const ReplayedSteps short_bucket = replay_allreduce_steps(one_bucket(true, 0.2), {0.010, 0.030}, 4, c);
  EXPECT_NEAR(short_bucket.step_s, slowest + 0.0005, 1e-12);
}

// Hosts of half a core whose compute fills it: an allreduce beside backward takes its CPU out of
// backward's. A CPU of 1 ms a MiB sent and echoed back makes the ring's 1 MiB at 2 ranks (1 MiB
// each way, 2 ms) take 0.5 ms of CPU: a quarter of a core for 2 ms, half the host's — backward
// loses half a second a second beside it; at 4 ranks (1.5 MiB each way, 6 ms) a quarter.
TEST(Replay, BackwardOnAFullHostLosesTheCpuOfTheAllreduceBesideIt) {
  NetworkConstants c = steps_of_a_millisecond();
  c.backward_sharing = {.host_cores = 0.5, .cpu_s_per_byte = 1e-3 / (1 << 20)};
  const Workload w = one_bucket(true, 0.2);
  EXPECT_NEAR(backward_lost_per_second(c, w, 0, 2), 0.5, 1e-12);
  EXPECT_NEAR(backward_lost_per_second(c, w, 0, 4), 0.25, 1e-12);
  // On a host of a tenth of a core the 2 ranks' CPU is 2.5 times its quota: the scheduler still
  // gives backward's thread half of it beside the communication thread.
  NetworkConstants small = c;
  small.backward_sharing.host_cores = 0.1;
  EXPECT_NEAR(backward_lost_per_second(small, w, 0, 2), 0.5, 1e-12);
  EXPECT_NEAR(backward_lost_per_second(small, w, 0, 4), 0.5, 1e-12);

  // Backward alone 10 ms (what the fit's runs lost: none): the bucket ready 0.2 into it, its 2 ms
  // all beside it, backward 11 ms: the step 10 + 11.
  const ReplayedSteps alone = replay_allreduce_steps(w, {0.020}, 2, c);
  EXPECT_NEAR(alone.step_s, 0.021, 1e-12);
  EXPECT_NEAR(alone.compute_s, 0.021, 1e-12);
  // Backward as measured (10 ms) held the 1 ms its runs at 2 ranks lost: the same N gives it back.
  c.backward_sharing.fit_lost_s = 0.001;
  EXPECT_NEAR(replay_allreduce_steps(w, {0.020}, 2, c).step_s, 0.020, 1e-12);
  // At 4 ranks 9 ms alone and a quarter of the 6 ms allreduce beside it: 10.5 ms, the step 20.5.
  const ReplayedSteps four = replay_allreduce_steps(w, {0.020}, 4, c);
  EXPECT_NEAR(four.step_s, 0.0205, 1e-12);
  EXPECT_NEAR(four.compute_s, 0.0205, 1e-12);
  // Hosts with cores to spare: backward keeps its time.
  c.backward_sharing.host_cores = 0;
  EXPECT_NEAR(replay_allreduce_steps(w, {0.020}, 4, c).step_s, 0.020, 1e-12);
}

// What runs' backward lost, by hand: two runs at 2 ranks whose 1 MiB bucket ran from 8 to 12 ms
// and from 4 to 6 ms of a 10 ms backward (2 and 2 ms beside it) at 0.5 s a second: 1 ms each.
// Their hosts' quota is taken only where every run had the same one.
TEST(Replay, WhatTheRunsBackwardLostIsTheirBucketsBesideItAtTheRate) {
  NetworkConstants c = steps_of_a_millisecond();
  c.backward_sharing = {.host_cores = 0.5, .cpu_s_per_byte = 1e-3 / (1 << 20)};
  const Workload w = one_bucket(true, 0.2);
  std::vector<FitRun> runs(2);
  for (FitRun& run : runs) {
    run.measured.workers = 2;
    run.measured.workload = w;
    run.measured.host_cores = 0.5;
  }
  runs[0].pieces = {{.what = "allreduce bucket", .index = 0, .bytes = 1 << 20, .start_s = 0.008, .end_s = 0.012}};
  runs[1].pieces = {{.what = "allreduce bucket", .index = 0, .bytes = 1 << 20, .start_s = 0.004, .end_s = 0.006}};
  EXPECT_NEAR(backward_lost_in_runs(c, w, runs), 0.001, 1e-12);
  EXPECT_EQ(host_cores_of_every_run(runs), 0.5);
  runs[1].measured.host_cores = 0.4;
  EXPECT_EQ(host_cores_of_every_run(runs), 0.0);
}

TEST(Replay, RandomDrawsAgreeWithTheExactOrderStatistic) {
  // 500 distinct computes and 4 ranks are too many combinations to replay each: the replay draws.
  // With the bucket after backward the step is the slowest of 4 draws and the allreduce.
  std::mt19937_64 generator(7);
  std::lognormal_distribution<double> spread(std::log(0.020), 0.3);
  std::vector<double> samples(500);
  for (double& s : samples) s = spread(generator);
  const ReplayedSteps drawn = replay_allreduce_steps(one_bucket(false, 1.0), samples, 4, steps_of_a_millisecond());
  const double exact = expected_max_of(samples, 4) + 0.006;
  EXPECT_NEAR(drawn.step_s, exact, 0.005 * exact);  // 20,000 draws of a spread of 30 %: 0.3 % standard error
  EXPECT_EQ(drawn.step_s, replay_allreduce_steps(one_bucket(false, 1.0), samples, 4, steps_of_a_millisecond()).step_s);
}

TEST(Replay, NothingToDrawFromOrOneRankIsRefused) {
  EXPECT_THROW(replay_allreduce_steps(one_bucket(false, 1.0), {}, 2, steps_of_a_millisecond()), InputError);
  EXPECT_THROW(replay_allreduce_steps(one_bucket(false, 1.0), {0.01}, 1, steps_of_a_millisecond()), InputError);
  EXPECT_THROW(replay_allreduce_steps(Workload{}, {0.01}, 2, steps_of_a_millisecond()), InputError);
}

}  // namespace
}  // namespace dtbench
