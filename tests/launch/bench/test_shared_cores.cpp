// doctor's check that emulated hosts own their compute (shared_cores.h): ranks of two hosts
// pinned to one core fail, naming both hosts, unless the hosts' quotas fit in that core.
#include <gtest/gtest.h>

#include "launch/bench/shared_cores.h"

namespace dtbench {
namespace {

TEST(SharedCores, RanksOfTwoHostsPinnedToOneCoreFailNamingBothHosts) {
  // What Open MPI did on a 2-host cluster: each host's daemon bound its rank to core 0.
  const auto problems = shared_core_problems({{0, "c-h0", {0}, 0.0}, {1, "c-h1", {0}, 0.0}});
  ASSERT_EQ(problems.size(), 2u);
  for (const auto& problem : problems) {
    EXPECT_NE(problem.find("pinned to core 0"), std::string::npos) << problem;
    EXPECT_NE(problem.find("c-h0, c-h1"), std::string::npos) << problem;
  }
}

TEST(SharedCores, HostsOnCoresOfTheirOwnOrUnpinnedPass) {
  EXPECT_EQ(shared_core_problems({{0, "c-h0", {0}, 1.0}, {1, "c-h1", {1}, 1.0}}), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(shared_core_problems({{0, "c-h0", {0, 1}, 0.0}, {1, "c-h1", {0, 1}, 0.0}}),
            (std::vector<std::string>{"", ""}));
  // Two ranks of one host on one core: the host's own business.
  EXPECT_EQ(shared_core_problems({{0, "c-h0", {0}, 0.0}, {1, "c-h0", {0}, 0.0}}), (std::vector<std::string>{"", ""}));
}

TEST(SharedCores, HalvesOfOneCoreGivenOnPurposePassAndMoreThanItHasFails) {
  EXPECT_EQ(shared_core_problems({{0, "c-h0", {0}, 0.5}, {1, "c-h1", {0}, 0.5}}), (std::vector<std::string>{"", ""}));
  const auto over = shared_core_problems({{0, "c-h0", {0}, 0.5}, {1, "c-h1", {0}, 0.5}, {2, "c-h2", {0}, 0.5}});
  for (const auto& problem : over) EXPECT_NE(problem.find("which ask 1.5 cores"), std::string::npos) << problem;
}

}  // namespace
}  // namespace dtbench
