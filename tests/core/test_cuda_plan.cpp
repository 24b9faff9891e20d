// The CUDA backend's planning, which is plain C++ and runs here: convolution algorithms searched
// once per shape and direction, the workspace's growth, and which GPU a local rank gets.
#include <gtest/gtest.h>

#include <string>

#include "core/cuda/plan/conv_algorithm_cache.h"
#include "core/cuda/plan/device_pick.h"
#include "core/cuda/plan/managed_budget.h"
#include "core/cuda/plan/workspace.h"
#include "core/util/error.h"

namespace dtbench::cuda_plan {
namespace {

TEST(ConvAlgorithmCache, SearchesOncePerShapeAndDirection) {
  ConvAlgorithmCache cache;
  int runs = 0;
  const auto search = [&runs] { return ConvChoice{++runs, 1000 * runs}; };
  const ConvShape stage{64, 64, 32, 32, 64, 3, 1, 1};
  ConvShape strided = stage;
  strided.stride = 2;
  ConvShape other_batch = stage;
  other_batch.batch = 63;

  const ConvChoice first = cache.choose(ConvDirection::Forward, stage, search);
  EXPECT_EQ(cache.choose(ConvDirection::Forward, stage, search).algorithm, first.algorithm);  // a second layer
  EXPECT_EQ(runs, 1);
  cache.choose(ConvDirection::BackwardData, stage, search);
  cache.choose(ConvDirection::BackwardFilter, stage, search);
  cache.choose(ConvDirection::Forward, strided, search);
  cache.choose(ConvDirection::Forward, other_batch, search);  // the last, smaller batch of an epoch
  EXPECT_EQ(runs, 5);
  EXPECT_EQ(cache.searches(), 5);
  EXPECT_EQ(cache.size(), 5u);
  EXPECT_EQ(cache.choose(ConvDirection::BackwardData, stage, search).workspace_bytes, 2000);
  EXPECT_EQ(runs, 5);
}

TEST(Workspace, GrowsInWholeMegabytesAndNeverShrinks) {
  EXPECT_EQ(workspace_size_for(0, 0), 0);
  EXPECT_EQ(workspace_size_for(0, 1), kWorkspaceGranule);
  EXPECT_EQ(workspace_size_for(kWorkspaceGranule, 10), kWorkspaceGranule);
  EXPECT_EQ(workspace_size_for(kWorkspaceGranule, kWorkspaceGranule + 1), 2 * kWorkspaceGranule);
  EXPECT_EQ(workspace_size_for(8 * kWorkspaceGranule, 3 * kWorkspaceGranule), 8 * kWorkspaceGranule);
  int64_t size = 0;  // a network's needs, in the order its layers ask
  for (const int64_t need : {int64_t{5} << 20, int64_t{300}, int64_t{12} << 20, int64_t{1} << 20}) {
    size = workspace_size_for(size, need);
    EXPECT_GE(size, need);
  }
  EXPECT_EQ(size, int64_t{12} << 20);
}

TEST(Workspace, SearchLimitLeavesHalfTheFreeMemoryAndHonoursTheCap) {
  EXPECT_EQ(search_workspace_limit(int64_t{8} << 30, int64_t{1} << 30), int64_t{1} << 30);
  EXPECT_EQ(search_workspace_limit(int64_t{1} << 30, int64_t{1} << 30), int64_t{1} << 29);
  EXPECT_EQ(search_workspace_limit(0, int64_t{1} << 30), 0);
}

TEST(DevicePick, LocalRanksSpreadOverTheGpus) {
  std::string why;
  EXPECT_EQ(pick_device(0, 8, why), 0);
  EXPECT_EQ(pick_device(7, 8, why), 7);
  EXPECT_EQ(pick_device(9, 8, why), 1);  // more ranks than GPUs: they share
  EXPECT_EQ(pick_device(3, 1, why), 0);
  EXPECT_TRUE(why.empty());
}

TEST(DevicePick, NoGpuOrABadRankIsRefusedWithTheReason) {
  std::string why;
  EXPECT_EQ(pick_device(0, 0, why), -1);
  EXPECT_NE(why.find("no CUDA device"), std::string::npos) << why;
  why.clear();
  EXPECT_EQ(pick_device(-1, 2, why), -1);
  EXPECT_NE(why.find("-1"), std::string::npos) << why;
}

// 80 % of the free memory, split by the processes on the GPU; ranks spread round robin.
TEST(ManagedBudget, LimitIsEightyPercentOfTheFreeMemorySharedByTheGpusProcesses) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(managed_limit_for(80 * kGiB, 1), 64 * kGiB);
  EXPECT_EQ(managed_limit_for(80 * kGiB, 2), 32 * kGiB);
  EXPECT_EQ(managed_limit_for(80 * kGiB, 0), 64 * kGiB);
  EXPECT_EQ(managed_limit_for(0, 1), 0);
  EXPECT_EQ(processes_per_device(1, 1), 1);
  EXPECT_EQ(processes_per_device(2, 1), 2);
  EXPECT_EQ(processes_per_device(3, 2), 2);
  EXPECT_EQ(processes_per_device(8, 8), 1);
  EXPECT_EQ(processes_per_device(0, 0), 1);
}

// Reservations up to the limit pass, one past it is refused naming what asked and changes nothing,
// and what is released can be reserved again; the first limit set stays.
TEST(ManagedBudget, RefusesAReservationPastTheLimitNamingItAndKeepsCount) {
  ManagedBudget budget;
  EXPECT_FALSE(budget.has_limit());
  EXPECT_THROW(budget.reserve(1, "x"), LogicError);
  EXPECT_EQ(budget.set_limit(1000), 1000);
  EXPECT_EQ(budget.set_limit(5), 1000);
  budget.reserve(600, "the arena");
  budget.reserve(400, "a layer");
  EXPECT_EQ(budget.held(), 1000);
  try {
    budget.reserve(1, "the loss's rows");
    ADD_FAILURE() << "a reservation past the limit passed";
  } catch (const InputError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("the loss's rows needs"), std::string::npos) << what;
    EXPECT_NE(what.find("can hang the GPU"), std::string::npos) << what;
  }
  EXPECT_EQ(budget.held(), 1000);
  budget.release(400);
  EXPECT_NO_THROW(budget.reserve(400, "a layer again"));
  budget.release(5000);
  EXPECT_EQ(budget.held(), 0);
}

}  // namespace
}  // namespace dtbench::cuda_plan
