// What decides which candidate the tuner keeps, on timings made up for it: a slow first timing
// does not drop the rule's candidate, a disturbed one drops nobody, a clearly slower candidate is
// dropped after its first undisturbed round.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "core/tuning/timing_rounds.h"

namespace dtbench {
namespace {

// Candidate i's k-th timing is timings[i][k], the last one repeated once they run out.
struct Script {
  std::vector<std::vector<QuietTiming>> timings;
  std::vector<int> calls = std::vector<int>(timings.size(), 0);
  QuietTiming operator()(size_t i) {
    const auto& mine = timings[i];
    const size_t k = static_cast<size_t>(calls[i]++);
    return mine[std::min(k, mine.size() - 1)];
  }
};

QuietTiming quiet(double ms) { return {.ms = ms, .disturbed = false}; }
QuietTiming disturbed(double ms) { return {.ms = ms, .disturbed = true}; }

TEST(TimingRounds, TheRulesCandidateIsNotDroppedOnASlowFirstTiming) {
  // The rule (0) truly takes 1.0 ms, its first timing 5 ms; candidate 1 takes 1.3 ms.
  Script script{.timings = {{quiet(5.0), quiet(1.0)}, {quiet(1.3)}}};
  const TimingRounds rounds = time_in_rounds(2, 0, 30.0, std::ref(script));
  EXPECT_GE(script.calls[0], 2);
  EXPECT_DOUBLE_EQ(rounds.best_ms[0], 1.0);
  EXPECT_LT(rounds.best_ms[0], rounds.best_ms[1]);
}

TEST(TimingRounds, AnotherCandidateTwiceTheFastestIsDroppedAfterItsFirstRound) {
  Script script{.timings = {{quiet(1.0)}, {quiet(2.5)}}};
  const TimingRounds rounds = time_in_rounds(2, 0, 30.0, std::ref(script));
  EXPECT_EQ(script.calls[1], 1);
  EXPECT_GE(script.calls[0], 2);
  EXPECT_DOUBLE_EQ(rounds.best_ms[1], 2.5);
  EXPECT_EQ(rounds.timed, script.calls[0] + script.calls[1]);
}

TEST(TimingRounds, DisturbedTimingsDropNobodyAndAreCounted) {
  // Candidate 1's first two timings lost their CPU (5 ms); undisturbed it takes 0.9 ms and wins.
  Script script{.timings = {{quiet(1.0)}, {disturbed(5.0), disturbed(5.0), quiet(0.9)}}};
  const TimingRounds rounds = time_in_rounds(2, kNoRule, 30.0, std::ref(script));
  EXPECT_GE(script.calls[1], 4);  // two undisturbed timings wanted
  EXPECT_DOUBLE_EQ(rounds.best_ms[1], 0.9);
  EXPECT_EQ(rounds.disturbed, 2);
}

TEST(TimingRounds, EveryTimingDisturbedGivesTheLeastOfAllAndStopsAfterTwelveRounds) {
  Script script{.timings = {{disturbed(2.0), disturbed(1.5)}}};
  const TimingRounds rounds = time_in_rounds(1, 0, 30.0, std::ref(script));
  EXPECT_EQ(script.calls[0], 12);
  EXPECT_DOUBLE_EQ(rounds.best_ms[0], 1.5);
  EXPECT_EQ(rounds.disturbed, 12);
}

}  // namespace
}  // namespace dtbench
