// The CUDA backend's planning, which is plain C++ and runs here: convolution algorithms searched
// once per shape and direction, the workspace's growth, which GPU a local rank gets, the memory
// budget, and the host arena's mirror on the device (with memcpy standing in for the CUDA copies).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/cuda/plan/conv_algorithm_cache.h"
#include "core/cuda/plan/device_pick.h"
#include "core/cuda/plan/host_mirror.h"
#include "core/cuda/plan/memory_budget.h"
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

// What the kit prints when a model step disagrees: each convolution's choice, named.
TEST(ConvAlgorithmCache, ListsEveryChoiceWithItsShapeAndName) {
  ConvAlgorithmCache cache;
  EXPECT_TRUE(cache.lines([](ConvDirection, int) { return std::string(); }).empty());
  const ConvShape shape{4, 64, 32, 16, 128, 3, 2, 1};
  cache.choose(ConvDirection::BackwardFilter, shape, [] { return ConvChoice{3, 4096}; });
  cache.choose(ConvDirection::Forward, shape, [] { return ConvChoice{1, 0}; });
  const auto name = [](ConvDirection direction, int algorithm) {
    return fmt::format("{}-{}", direction == ConvDirection::Forward ? "FWD" : "BWD_FILTER", algorithm);
  };
  const std::vector<std::string> lines = cache.lines(name);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "forward n4 c64 32x16 -> 128 k3 s2 p1: FWD-1 (algorithm 1), workspace 0 B");
  EXPECT_EQ(lines[1], "filter-gradient n4 c64 32x16 -> 128 k3 s2 p1: BWD_FILTER-3 (algorithm 3), workspace 4096 B");
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
TEST(MemoryBudget, LimitIsEightyPercentOfTheFreeMemorySharedByTheGpusProcesses) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  EXPECT_EQ(memory_limit_for(80 * kGiB, 1), 64 * kGiB);
  EXPECT_EQ(memory_limit_for(80 * kGiB, 2), 32 * kGiB);
  EXPECT_EQ(memory_limit_for(80 * kGiB, 0), 64 * kGiB);
  EXPECT_EQ(memory_limit_for(0, 1), 0);
  EXPECT_EQ(processes_per_device(1, 1), 1);
  EXPECT_EQ(processes_per_device(2, 1), 2);
  EXPECT_EQ(processes_per_device(3, 2), 2);
  EXPECT_EQ(processes_per_device(8, 8), 1);
  EXPECT_EQ(processes_per_device(0, 0), 1);
}

// Reservations up to the limit pass, one past it is refused naming what asked and changes nothing,
// and what is released can be reserved again; the first limit set stays.
TEST(MemoryBudget, RefusesAReservationPastTheLimitNamingItAndKeepsCount) {
  MemoryBudget budget;
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
    EXPECT_NE(what.find("GiB of GPU memory"), std::string::npos) << what;
    EXPECT_NE(what.find("fewer ranks per GPU"), std::string::npos) << what;
  }
  EXPECT_EQ(budget.held(), 1000);
  budget.release(400);
  EXPECT_NO_THROW(budget.reserve(400, "a layer again"));
  budget.release(5000);
  EXPECT_EQ(budget.held(), 0);
}

// A host block and its "device" copy (another host vector here, the copy a memcpy that counts what
// it moved): the device's view of a range is the same offset in the copy; a move copies exactly
// that range and nothing beside it, either way; ranges outside every block or past a block's end
// are refused by name.
TEST(HostMirrors, MovesExactlyTheRangeAskedBetweenAHostBlockAndItsDeviceCopy) {
  int64_t moved = 0;
  const FloatCopy copy = [&moved](float* to, const float* from, int64_t count) {
    std::memcpy(to, from, static_cast<size_t>(count) * sizeof(float));
    moved += count;
  };
  HostMirrors mirrors(copy, copy);
  std::vector<float> host(100, 1.0f), device(100, 0.0f), other_host(10, 5.0f), other_device(10, 0.0f);
  mirrors.add(host.data(), device.data(), 100);
  mirrors.add(other_host.data(), other_device.data(), 10);
  EXPECT_EQ(mirrors.blocks(), 2);
  EXPECT_EQ(mirrors.device_address(host.data() + 37, 63), device.data() + 37);
  EXPECT_EQ(mirrors.device_view(std::span<float>(other_host).subspan(2, 3)).data(), other_device.data() + 2);

  // Host wrote [10, 20): only those reach the device.
  for (int i = 10; i < 20; ++i) host[static_cast<size_t>(i)] = static_cast<float>(i);
  mirrors.to_device(std::span<const float>(host).subspan(10, 10));
  EXPECT_EQ(moved, 10);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(device[static_cast<size_t>(i)], i >= 10 && i < 20 ? static_cast<float>(i) : 0.0f) << i;
  }
  // The device wrote [50, 60) and [90, 100): moving [50, 60) back leaves the host's [90, 100).
  for (int i = 50; i < 60; ++i) device[static_cast<size_t>(i)] = -static_cast<float>(i);
  for (int i = 90; i < 100; ++i) device[static_cast<size_t>(i)] = 7.0f;
  mirrors.to_host(std::span<float>(host).subspan(50, 10));
  EXPECT_EQ(moved, 20);
  for (int i = 50; i < 60; ++i) EXPECT_EQ(host[static_cast<size_t>(i)], -static_cast<float>(i)) << i;
  for (int i = 90; i < 100; ++i) EXPECT_EQ(host[static_cast<size_t>(i)], 1.0f) << i;
  mirrors.to_host({});
  EXPECT_EQ(moved, 20);

  std::vector<float> stranger(4);
  try {
    mirrors.to_host(stranger);
    ADD_FAILURE() << "a range of no block was moved";
  } catch (const LogicError& error) {
    EXPECT_NE(std::string(error.what()).find("not memory the device backend allocated"), std::string::npos);
  }
  EXPECT_THROW(mirrors.device_address(host.data() + 95, 6), LogicError);  // runs past the block
  EXPECT_THROW(mirrors.device_address(host.data() + 100, 1), LogicError);  // one past it
  mirrors.remove(host.data());
  EXPECT_EQ(mirrors.blocks(), 1);
  EXPECT_THROW(mirrors.device_address(host.data(), 1), LogicError);
  EXPECT_EQ(moved, 20);
}

}  // namespace
}  // namespace dtbench::cuda_plan
