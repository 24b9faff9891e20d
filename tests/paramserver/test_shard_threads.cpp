// ShardThreads: every shard's call runs once per run(), results come back in shard order, and a
// failure is rethrown only after every call has ended.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "paramserver/for_each_shard.h"

namespace dtbench {
namespace {

TEST(ShardThreads, RunsEveryShardOncePerRunAndKeepsShardOrder) {
  for (size_t shards : {1u, 2u, 5u}) {
    ShardThreads threads(shards);
    for (int round = 0; round < 50; ++round) {
      std::vector<std::atomic<int>> calls(shards);
      const auto results = threads.run([&](int shard) {
        ++calls[static_cast<size_t>(shard)];
        return shard * 10 + round;
      });
      ASSERT_EQ(results.size(), shards);
      for (size_t s = 0; s < shards; ++s) {
        EXPECT_EQ(results[s], static_cast<int>(s) * 10 + round);
        EXPECT_EQ(calls[s].load(), 1) << "shard " << s << " round " << round;
      }
    }
  }
}

TEST(ShardThreads, RethrowsTheFirstFailureAfterEveryCallHasEnded) {
  ShardThreads threads(3);
  std::atomic<bool> slow_shard_done{false};
  try {
    threads.run([&](int shard) -> int {
      if (shard == 2) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        slow_shard_done = true;
        throw std::runtime_error("shard 2 failed");
      }
      if (shard == 1) throw std::runtime_error("shard 1 failed");
      return 0;
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "shard 1 failed");
    EXPECT_TRUE(slow_shard_done.load()) << "rethrown before shard 2's call ended";
  }
  // Still usable afterwards.
  EXPECT_EQ(threads.run([](int shard) { return shard; }), (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace dtbench
