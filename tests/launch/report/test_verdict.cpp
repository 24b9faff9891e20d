// The verdict over hand-built runs whose answer is known: the ranking and its factor from medians
// computed here, the p-values against the exact Mann-Whitney counts (2 of C(10,5) = 252 orderings
// for 5 runs all faster than 5, 2 of C(6,3) = 20 for 3 vs 3), speed-up and efficiency, the cost of
// a straggler, and the cautions (too few repetitions, diverged runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "launch/report/verdict.h"

namespace dtbench {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// `times[i]` seconds to the single target and `throughput[i]` images/s of run i of one configuration.
std::vector<VerdictRun> configuration(const std::string& transport, int world, const std::vector<double>& times,
                                      const std::vector<double>& throughput, double straggler_ms = 0.0) {
  std::vector<VerdictRun> runs;
  for (size_t i = 0; i < times.size(); ++i) {
    VerdictRun run{.label = fmt::format("{} x{}{}", transport, world, straggler_ms > 0 ? " slow" : ""),
                   .transport = transport, .world = world, .straggler_delay_ms = straggler_ms,
                   .seconds_to_target = {times[i]}, .images_per_second = throughput[i], .comm_share = 0.25};
    runs.push_back(run);
  }
  return runs;
}

std::vector<VerdictRun> joined(std::vector<VerdictRun> a, const std::vector<VerdictRun>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

TEST(Verdict, RanksByTimeToTargetAndStatesTheSignificance) {
  // ring: median 10 s; ps-sync: median 14 s, every run slower than every ring run.
  const auto runs = joined(configuration("ps-sync", 3, {14, 13, 15, 16, 12.5}, {500, 500, 500, 500, 500}),
                           configuration("ring", 3, {10, 9, 11, 10.5, 9.5}, {700, 700, 700, 700, 700}));
  const Verdict v = reach_verdict(runs, {0.8});
  ASSERT_TRUE(v.by_time);
  EXPECT_DOUBLE_EQ(v.target, 0.8);
  ASSERT_EQ(v.ranking.size(), 2u);
  EXPECT_EQ(v.ranking[0].label, "ring x3");
  EXPECT_DOUBLE_EQ(v.ranking[0].ranked.median, 10.0);
  EXPECT_DOUBLE_EQ(v.ranking[1].ranked.median, 14.0);
  EXPECT_TRUE(mentions(v.findings, "ring x3 reaches 80.0% test accuracy first"));
  EXPECT_TRUE(mentions(v.findings, fmt::format("ring x3 is {:.2f}x faster than ps-sync x3 (5 vs 5 runs, p = {:.2g})",
                                               14.0 / 10.0, 2.0 / 252.0)));
  EXPECT_FALSE(mentions(v.cautions, "fewer than"));  // five each: enough
}

TEST(Verdict, SaysNotSignificantWhenTheRunsCannotShowIt) {
  const auto runs = joined(configuration("ring", 2, {10, 11, 12}, {1, 1, 1}),
                           configuration("mpi", 2, {13, 14, 15}, {1, 1, 1}));
  const Verdict v = reach_verdict(runs, {0.5});
  // Three against three, all apart: the smallest two-sided p there is, 2/20.
  EXPECT_TRUE(mentions(v.findings, fmt::format("(3 vs 3 runs, p = {:.2g}: not significant)", 0.1)));
  EXPECT_TRUE(mentions(v.cautions, "fewer than 5 repetitions (ring x2: 3, mpi x2: 3)"));
}

TEST(Verdict, SingleRunsAreNotTested) {
  const auto runs = joined(configuration("ring", 2, {10}, {1}), configuration("mpi", 2, {20}, {1}));
  const Verdict v = reach_verdict(runs, {0.5});
  EXPECT_TRUE(mentions(v.findings, "ring x2 is 2.00x faster than mpi x2 (1 vs 1 run, too few to test)"));
}

TEST(Verdict, FallsBackToThroughputWhenATargetIsNotReachedByAll) {
  const auto runs = joined(configuration("ring", 2, {10, 10}, {800, 900}),
                           configuration("ps-async", 2, {kNever, kNever}, {1200, 1300}));
  const Verdict v = reach_verdict(runs, {0.9});
  EXPECT_FALSE(v.by_time);
  ASSERT_EQ(v.ranking.size(), 2u);
  EXPECT_EQ(v.ranking[0].label, "ps-async x2");
  EXPECT_DOUBLE_EQ(v.ranking[0].ranked.median, 1250.0);
  EXPECT_TRUE(mentions(v.findings, "ps-async x2 has the highest throughput"));
  EXPECT_TRUE(mentions(v.findings, fmt::format("{:.2f}x faster than ring x2", 1250.0 / 850.0)));
}

TEST(Verdict, PicksTheHighestTargetEveryContenderReached) {
  auto runs = configuration("ring", 2, {0}, {1});
  runs[0].seconds_to_target = {5, 8, kNever};
  auto other = configuration("mpi", 2, {0}, {1});
  other[0].seconds_to_target = {6, 9, 12};
  const Verdict v = reach_verdict(joined(runs, other), {0.5, 0.7, 0.9});
  ASSERT_TRUE(v.by_time);
  EXPECT_DOUBLE_EQ(v.target, 0.7);
  EXPECT_EQ(v.ranking[0].label, "ring x2");
}

TEST(Verdict, ScalingOverOneWorker) {
  const auto runs = joined(configuration("none", 1, {30, 30}, {1000, 1000}),
                           joined(configuration("ring", 4, {10, 10}, {3000, 3200}),
                                  configuration("ps-sync", 4, {12, 12}, {2000, 2000})));
  const Verdict v = reach_verdict(runs, {0.5});
  // The one-worker run is the yardstick, not a contender.
  ASSERT_EQ(v.ranking.size(), 2u);
  EXPECT_TRUE(mentions(v.findings, "Throughput over one worker (none x1, 1000 images/s)"));
  EXPECT_TRUE(mentions(v.findings, fmt::format("ring x4 {:.2f}x ({:.1f}% scaling efficiency)", 3.1, 100 * 3.1 / 4)));
  EXPECT_TRUE(mentions(v.findings, "ps-sync x4 2.00x (50.0% scaling efficiency)"));
}

TEST(Verdict, ScalingAlongAWorkersAxisWithoutOneWorker) {
  const auto runs = joined(configuration("ring", 2, {10}, {1000}), configuration("ring", 4, {6}, {1500}));
  const Verdict v = reach_verdict(runs, {0.5});
  EXPECT_TRUE(mentions(v.findings, "ring x4 1.50x (75.0% scaling efficiency over ring x2)"));
}

TEST(Verdict, StragglerSensitivityAgainstTheSameTransportWithout) {
  const auto runs = joined(joined(configuration("ps-async", 3, {10}, {1000}), configuration("ring", 3, {9}, {1100})),
                           joined(configuration("ps-async", 3, {11}, {920}, 20), configuration("ring", 3, {20}, {451}, 20)));
  const Verdict v = reach_verdict(runs, {0.5});
  // Straggler configurations measure sensitivity; they are not ranked.
  ASSERT_EQ(v.ranking.size(), 2u);
  EXPECT_TRUE(mentions(v.findings, "ps-async x3 keeps 92.0% of its throughput with a 20 ms straggler"));
  EXPECT_TRUE(mentions(v.findings, "ring x3 keeps 41.0% of its throughput with a 20 ms straggler"));
}

TEST(Verdict, CountsDivergedRunsAndCommShare) {
  auto runs = configuration("ps-async", 2, {kNever, 10, 11}, {1, 1, 1});
  runs[0].diverged = true;
  const Verdict v = reach_verdict(runs, {0.5});
  EXPECT_TRUE(mentions(v.cautions, "ps-async x2: 1 of 3 run(s) diverged"));
  EXPECT_TRUE(mentions(v.findings, "Share of a step spent waiting for communication: 25.0% with ps-async x2"));
  // The diverged run counts as never reaching the target: the median of {10, 11, inf} is 11.
  EXPECT_DOUBLE_EQ(v.ranking[0].ranked.median, 11.0);
  EXPECT_TRUE(mentions(v.findings, "11.00 s (median of 3 runs, the fastest 10.00 s; 1 did not reach it)"));
}

TEST(Verdict, NothingToJudge) {
  const Verdict v = reach_verdict({}, {0.5});
  EXPECT_TRUE(v.ranking.empty());
  EXPECT_TRUE(v.findings.empty());
}

}  // namespace
}  // namespace dtbench
