// The CUDA backend's planning, which is plain C++ and runs here: convolution algorithms searched
// once per shape and direction, the workspace's growth, and which GPU a local rank gets.
#include <gtest/gtest.h>

#include <string>

#include "core/cuda/plan/conv_algorithm_cache.h"
#include "core/cuda/plan/device_pick.h"
#include "core/cuda/plan/workspace.h"

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

}  // namespace
}  // namespace dtbench::cuda_plan
