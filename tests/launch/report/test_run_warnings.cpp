// Each warning of a run, on a hand-built run that should raise it and one just inside the line
// that should not: oversubscribed, machine busy, synthetic data, and the three ways to diverge —
// and a diverged run is credited no time to accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "launch/report/run_warnings.h"
#include "launch/report/tables.h"

namespace dtbench {
namespace {

// A healthy two-epoch run of `world` workers on one 4-core host, 1 BLAS thread each.
RunRecord healthy_run(int world = 2) {
  RunRecord run;
  run.name = "run";
  run.status = "complete";
  run.transport = "ring";
  run.world = world;
  run.context.cores = 4;
  run.context.threads = 1;
  run.context.hosts = {"a"};
  run.epochs.resize(2);
  // epoch, wall seconds, training loss, test loss, test accuracy
  const std::array<std::array<double, 5>, 2> epochs = {{{1, 2, 1.5, 1.0, 0.6}, {2, 4, 0.8, 0.7, 0.75}}};
  for (size_t i = 0; i < epochs.size(); ++i) {
    EpochRecord& e = run.epochs[i];
    e.epoch = static_cast<int>(epochs[i][0]);
    e.steps = 10;
    e.wall_seconds = epochs[i][1];
    e.train_loss = epochs[i][2];
    e.test_loss = epochs[i][3];
    e.test_accuracy = epochs[i][4];
  }
  return run;
}

bool has(const RunRecord& run, const std::string& kind) {
  const auto warnings = run_warnings(run);
  return std::any_of(warnings.begin(), warnings.end(), [&](const RunWarning& w) { return w.kind == kind; });
}

ResourceRecord sampled(int rank, double cpu_percent, double core_percent) {
  ResourceRecord r;
  r.rank = rank;
  r.samples = 5;
  r.cpu_percent_mean = cpu_percent;
  r.core_percent_mean = core_percent;
  return r;
}

TEST(RunWarnings, AHealthyRunHasNone) { EXPECT_TRUE(run_warnings(healthy_run()).empty()); }

TEST(RunWarnings, OversubscribedWhenWorkersTimesThreadsExceedCores) {
  RunRecord run = healthy_run(4);
  EXPECT_FALSE(has(run, "oversubscribed"));  // 4 x 1 on 4 cores: exactly full
  run.context.threads = 2;
  EXPECT_TRUE(has(run, "oversubscribed"));   // 4 x 2 on 4
  // The same workers spread over two hosts: 2 x 2 on each.
  run.context.hosts = {"a", "a", "b", "b"};
  EXPECT_FALSE(has(run, "oversubscribed"));
}

// Ranks that poll on emulated hosts sharing cores are warned of; ranks that yield, whole-core hosts
// and runs that do not say (no MPI) are not.
TEST(RunWarnings, PollingRanksOnlyWhereEmulatedHostsShareCores) {
  RunRecord run = healthy_run(3);
  run.context.hosts = {"h0", "h1", "h2"};
  run.context.emulated_cluster = true;
  run.context.host_cores = 0.67;
  EXPECT_FALSE(has(run, "polling ranks"));  // unknown: not an MPI run
  run.context.ranks_yield = false;
  EXPECT_TRUE(has(run, "polling ranks"));
  run.context.ranks_yield = true;
  EXPECT_FALSE(has(run, "polling ranks"));
  run.context.ranks_yield = false;
  run.context.host_cores = 1.0;
  EXPECT_FALSE(has(run, "polling ranks"));  // a whole core each
  run.context.time_sliced = true;
  EXPECT_TRUE(has(run, "polling ranks"));   // ... but more than the machine has
}

// ps-sync's bucketed pushes on hosts of less than a core take backward's CPU; after backward, or on
// whole-core hosts, or for another transport, nothing is said.
TEST(RunWarnings, BucketedPsSyncOnHostsOfLessThanACore) {
  RunRecord run = healthy_run(3);
  run.transport = "ps-sync";
  run.context.hosts = {"h0", "h1", "h2"};
  run.context.emulated_cluster = true;
  run.context.host_cores = 0.5;
  EXPECT_FALSE(has(run, "bucketed pushes"));  // pushed after backward
  run.context.overlapped = true;
  EXPECT_TRUE(has(run, "bucketed pushes"));
  run.context.host_cores = 1.0;
  EXPECT_FALSE(has(run, "bucketed pushes"));  // a whole core each
  run.context.host_cores = 0.5;
  run.transport = "ring";
  EXPECT_FALSE(has(run, "bucketed pushes"));
}

TEST(RunWarnings, MachineBusyFromTheSampledLoadLessTheWorkersOwn) {
  RunRecord run = healthy_run(2);
  run.context.hosts = {"a", "a"};
  // The 4 cores 60 % busy = 2.4 cores; the workers used 1.1 each: 0.2 for everything else.
  run.resources = {sampled(0, 110, 60), sampled(1, 110, 60)};
  EXPECT_NEAR(other_busy_cores(run), 0.2, 1e-9);
  EXPECT_FALSE(has(run, "machine busy"));
  // 100 % busy while the workers used 0.5 core each: 3 cores for others.
  run.resources = {sampled(0, 50, 100), sampled(1, 50, 100)};
  EXPECT_NEAR(other_busy_cores(run), 3.0, 1e-9);
  EXPECT_TRUE(has(run, "machine busy"));
  run.resources.clear();
  EXPECT_TRUE(std::isnan(other_busy_cores(run)));
  EXPECT_FALSE(has(run, "machine busy"));
}

// A worker on each of two emulated hosts of `host_cores` on one 2-core machine.
RunRecord on_two_emulated_hosts(double host_cores) {
  RunRecord run = healthy_run(2);
  run.context.cores = 2;
  run.context.hosts = {"c-h0", "c-h1"};
  run.context.emulated_cluster = true;
  run.context.host_cores = host_cores;
  return run;
}

// Two emulated hosts of one 2-core machine, a worker each on a core of its own: the machine is
// fully busy, but with the run's own workers — the other host's worker is no foreign load.
TEST(RunWarnings, TheOtherEmulatedHostsWorkersAreNotForeignLoad) {
  RunRecord run = on_two_emulated_hosts(1.0);
  run.resources = {sampled(0, 100, 100), sampled(1, 100, 100)};
  EXPECT_NEAR(other_busy_cores(run), 0.0, 1e-9);
  EXPECT_FALSE(has(run, "machine busy"));
  // Real hosts of two cores each, a worker on each, both machines fully busy: a core of others on each.
  run.context.emulated_cluster = false;
  EXPECT_NEAR(other_busy_cores(run), 1.0, 1e-9);
  EXPECT_TRUE(has(run, "machine busy"));
}

// 3 half-core hosts on a 2-core machine leave half of core 1 to the cluster's filler, which keeps
// it busy while no host wants it: the machine's 2 cores busy, the workers' 1.5 — the filler's 0.5
// is no foreign load. Half a core beyond it is.
TEST(RunWarnings, TheClustersFillerIsNotForeignLoad) {
  RunRecord run = healthy_run(3);
  run.context.cores = 2;
  run.context.hosts = {"c-h0", "c-h1", "c-h2"};
  run.context.emulated_cluster = true;
  run.context.host_cores = 0.5;
  run.context.filler_cores = 0.5;
  run.resources = {sampled(0, 50, 100), sampled(1, 50, 100), sampled(2, 50, 100)};
  EXPECT_NEAR(other_busy_cores(run), 0.0, 1e-9);
  EXPECT_FALSE(has(run, "machine busy"));
  run.context.filler_cores = 0.0;  // the same load on a cluster without one: half a core of others
  EXPECT_NEAR(other_busy_cores(run), 0.5, 1e-9);
}

TEST(RunWarnings, EmulatedHostsAreOversubscribedByTheirOwnCoresAndSayWhenTimeSliced) {
  RunRecord run = on_two_emulated_hosts(0.5);  // 1 worker x 1 thread on half a core
  EXPECT_TRUE(has(run, "oversubscribed"));
  run.context.host_cores = 1.0;
  EXPECT_FALSE(has(run, "oversubscribed"));
  EXPECT_FALSE(has(run, "time-sliced hosts"));
  run.context.time_sliced = true;
  EXPECT_TRUE(has(run, "time-sliced hosts"));
}

TEST(RunWarnings, SyntheticData) {
  RunRecord run = healthy_run();
  run.context.synthetic = true;
  run.context.data_path = "data/synthetic-cifar10";
  EXPECT_TRUE(has(run, "synthetic data"));
}

TEST(RunWarnings, DivergedOnANonFiniteLoss) {
  RunRecord run = healthy_run();
  run.epochs[1].train_loss = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(divergence(run), "the loss is not finite in epoch 2");
  EXPECT_TRUE(has(run, "diverged"));
}

TEST(RunWarnings, DivergedOnAnExplodingLoss) {
  RunRecord run = healthy_run();
  run.epochs[1].test_loss = kExplodingLossFactor * 1.5 * 0.99;  // just under four times epoch 1's 1.5
  EXPECT_FALSE(diverged(run));
  run.epochs[1].test_loss = kExplodingLossFactor * 1.5 * 1.01;
  EXPECT_TRUE(diverged(run));
}

TEST(RunWarnings, DivergedWhenFinalAccuracyFallsFarBelowItsBest) {
  RunRecord run = healthy_run();
  run.epochs[1].test_accuracy = 0.6 - kAccuracyCollapse + 0.01;  // 19 points below the best: not yet
  EXPECT_FALSE(diverged(run));
  run.epochs[1].test_accuracy = 0.1;
  EXPECT_EQ(divergence(run), "its final test accuracy 10.0% is far below its best, 60.0% in epoch 1");
}

TEST(RunWarnings, ADivergedRunIsCreditedNoTimeToAccuracy) {
  RunRecord run = healthy_run();
  ASSERT_NE(first_epoch_reaching(run, 0.6), nullptr);
  EXPECT_EQ(first_epoch_reaching(run, 0.6)->epoch, 1);
  run.epochs[1].test_accuracy = 0.1;  // reached 60 % in epoch 1, then fell apart
  EXPECT_EQ(first_epoch_reaching(run, 0.6), nullptr);
}

}  // namespace
}  // namespace dtbench
