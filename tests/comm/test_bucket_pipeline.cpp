// The bucket service on its own: the plan, the ready counting, and the communication thread's
// hand-over, failures and stop, with handlers that record what they were given.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "comm/bucket_pipeline.h"
#include "comm/bucket_plan.h"
#include "core/util/error.h"

namespace dtbench {
namespace {

using namespace std::chrono_literals;

// An arena of parameters of the given sizes, in layer order.
struct TestArena {
  explicit TestArena(const std::vector<int64_t>& sizes) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      params.push_back(std::make_unique<Param>(Param{.name = fmt::format("p{}", i), .shape = {sizes[i]}}));
    }
    std::vector<Param*> raw;
    for (auto& param : params) raw.push_back(param.get());
    arena.bind(raw);
  }
  std::vector<std::unique_ptr<Param>> params;
  ParamArena arena;
};

constexpr int64_t kFloat = sizeof(float);

TEST(BucketPlan, ContiguousCoversTheArenaOnceInReverseLayerOrder) {
  for (const int64_t bucket_floats : {1, 7, 10, 25, 1000}) {
    TestArena a({3, 10, 1, 7, 20, 5});
    const BucketPlan plan = BucketPlan::contiguous(a.arena, bucket_floats * kFloat);
    const auto& ranges = plan.ranges();
    ASSERT_EQ(static_cast<int>(ranges.size()), plan.bucket_count());
    // Back to front without gap or overlap: bucket 0 ends at the arena's end, the last starts at 0.
    int64_t end = a.arena.count();
    for (const ArenaRange& range : ranges) {
      EXPECT_GT(range.count, 0);
      EXPECT_EQ(range.offset + range.count, end) << "bucket floats " << bucket_floats;
      end = range.offset;
    }
    EXPECT_EQ(end, 0);
    // Every parameter in exactly the bucket that holds it, and the counts add up.
    int total = 0;
    for (size_t p = 0; p < a.params.size(); ++p) {
      const auto& buckets = plan.buckets_of(static_cast<int>(p));
      ASSERT_EQ(buckets.size(), 1u);
      const ArenaRange& range = ranges[static_cast<size_t>(buckets[0])];
      EXPECT_GE(a.params[p]->offset, range.offset);
      EXPECT_LE(a.params[p]->offset + a.params[p]->numel(), range.offset + range.count);
      EXPECT_EQ(plan.param_index(*a.params[p]), static_cast<int>(p));
    }
    for (int b = 0; b < plan.bucket_count(); ++b) total += plan.params_in(b);
    EXPECT_EQ(total, static_cast<int>(a.params.size()));
  }
}

TEST(BucketPlan, ZeroBytesIsOneBucketOverTheWholeArena) {
  TestArena a({4, 4, 4});
  const BucketPlan plan = BucketPlan::contiguous(a.arena, 0);
  ASSERT_EQ(plan.bucket_count(), 1);
  EXPECT_EQ(plan.ranges()[0].offset, 0);
  EXPECT_EQ(plan.ranges()[0].count, a.arena.count());
  EXPECT_EQ(plan.params_in(0), 3);
}

TEST(BucketPlan, MembershipOutOfRangeIsRefused) {
  TestArena a({4, 4});
  EXPECT_THROW(BucketPlan::from_membership(a.arena, {{0}, {2}}, 2), LogicError);
  EXPECT_THROW(BucketPlan::from_membership(a.arena, {{0}}, 2), LogicError);
}

// Records the buckets handed over, in order.
struct Recorder {
  std::mutex mutex;
  std::vector<int> buckets;
  void operator()(int bucket) {
    std::lock_guard lock(mutex);
    buckets.push_back(bucket);
  }
  std::vector<int> seen() {
    std::lock_guard lock(mutex);
    return buckets;
  }
};

TEST(BucketPipeline, ABucketIsHandedOverOnceAllItsParametersAreReadyAndNotBefore) {
  TestArena a({1, 1, 1, 1});
  // Bucket 0: parameters 2, 3 (backward's first); bucket 1: parameters 0, 1 (the arena pads each
  // parameter alike, so half of it holds two).
  BucketPlan plan = BucketPlan::contiguous(a.arena, a.arena.count() / 2 * kFloat);
  ASSERT_EQ(plan.bucket_count(), 2);
  Recorder recorder;
  std::vector<int> prepared;
  BucketPipeline pipeline(std::move(plan), std::ref(recorder), [&](int bucket) { prepared.push_back(bucket); });
  for (int step = 0; step < 3; ++step) {
    pipeline.gradient_ready(*a.params[3]);
    std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(recorder.seen().size() == static_cast<size_t>(2 * step)) << "a bucket went with a parameter missing";
    pipeline.gradient_ready(*a.params[2]);
    pipeline.gradient_ready(*a.params[1]);
    std::this_thread::sleep_for(20ms);
    ASSERT_EQ(recorder.seen().size(), static_cast<size_t>(2 * step + 1));
    EXPECT_EQ(recorder.seen().back(), 0);
    pipeline.gradient_ready(*a.params[0]);
    const auto times = pipeline.wait_all();
    ASSERT_EQ(times.size(), 2u);
    EXPECT_EQ(times[0].bucket, 0);
    EXPECT_EQ(times[1].bucket, 1);
    for (const BucketTimes& t : times) {
      EXPECT_LE(t.ready, t.start);
      EXPECT_LE(t.start, t.end);
    }
  }
  EXPECT_EQ(recorder.seen(), (std::vector<int>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(prepared, (std::vector<int>{0, 1, 0, 1, 0, 1}));
}

TEST(BucketPipeline, AParameterInSeveralBucketsReadiesEach) {
  TestArena a({2, 2, 2});
  // Shards of keys: parameter 1 is cut across both.
  Recorder recorder;
  BucketPipeline pipeline(BucketPlan::from_membership(a.arena, {{0}, {0, 1}, {1}}, 2), std::ref(recorder));
  pipeline.gradient_ready(*a.params[2]);  // bucket 1 still waits for parameter 1
  std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(recorder.seen().empty());
  pipeline.gradient_ready(*a.params[1]);
  pipeline.gradient_ready(*a.params[0]);
  EXPECT_EQ(pipeline.wait_all().size(), 2u);
  EXPECT_EQ(recorder.seen(), (std::vector<int>{1, 0}));
}

TEST(BucketPipeline, ABucketOfNoParameterGoesAtTheStepsEndInsteadOfNever) {
  TestArena a({2, 2});
  // Three shards, the middle one without a key (LeNet-5's ten parameters on four servers).
  Recorder recorder;
  BucketPipeline pipeline(BucketPlan::from_membership(a.arena, {{0}, {2}}, 3), std::ref(recorder));
  for (int step = 0; step < 2; ++step) {
    pipeline.gradient_ready(*a.params[1]);
    pipeline.gradient_ready(*a.params[0]);
    const auto times = pipeline.wait_all();
    ASSERT_EQ(times.size(), 3u) << "step " << step;
    EXPECT_EQ(times.back().bucket, 1);
  }
  EXPECT_EQ(recorder.seen(), (std::vector<int>{2, 0, 1, 2, 0, 1}));
}

TEST(BucketPipeline, AFailureReachesTheWaiterAndLaterBucketsAreNotHandedOver) {
  TestArena a({1, 1, 1});
  Recorder recorder;
  BucketPipeline pipeline(BucketPlan::contiguous(a.arena, kFloat), [&](int bucket) {
    recorder(bucket);
    if (bucket == 0) throw IoError("peer 3 went away while reducing bucket 0");
  });
  for (int p = 2; p >= 0; --p) pipeline.gradient_ready(p);
  try {
    pipeline.wait_all();
    FAIL() << "the bucket's failure did not reach the waiter";
  } catch (const IoError& error) {
    EXPECT_STREQ(error.what(), "peer 3 went away while reducing bucket 0");
  }
  EXPECT_EQ(recorder.seen(), std::vector<int>{0});
  EXPECT_THROW(pipeline.wait_all(), IoError) << "the failure is forgotten after one step";
}

// Lanes: as many buckets in the communicate handler at once. Bucket 0's handler returns only once
// bucket 1's has begun: one lane would keep bucket 1 queued behind it (the wait times out).
TEST(BucketPipeline, WithTwoLanesABucketGoesWhileAnotherIsInHand) {
  TestArena a({1, 1});
  std::promise<void> second_began;
  std::shared_future<void> began = second_began.get_future().share();
  std::atomic<bool> saw_second{false};
  BucketPipeline pipeline(
      BucketPlan::contiguous(a.arena, kFloat),
      [&](int bucket) {
        if (bucket == 1) second_began.set_value();
        if (bucket == 0) saw_second = began.wait_for(5s) == std::future_status::ready;
      },
      {}, /*lanes=*/2);
  for (int p = 1; p >= 0; --p) pipeline.gradient_ready(p);  // bucket 0 (the last parameter) first
  const auto done = pipeline.wait_all();
  EXPECT_TRUE(saw_second) << "bucket 1 waited for bucket 0's handler to return";
  ASSERT_EQ(done.size(), 2u);
  EXPECT_LT(done[0].start, done[1].end);
  EXPECT_LT(done[1].start, done[0].end) << "the two buckets' hand-overs did not overlap";
}

// A lane that fails while another is in hand: the other finishes, and the waiter hears the failure.
TEST(BucketPipeline, WithTwoLanesAFailureWaitsForTheOtherLaneAndReachesTheWaiter) {
  TestArena a({1, 1});
  std::promise<void> failed;
  std::shared_future<void> failure_thrown = failed.get_future().share();
  std::atomic<bool> other_finished{false};
  BucketPipeline pipeline(
      BucketPlan::contiguous(a.arena, kFloat),
      [&](int bucket) {
        if (bucket == 1) {
          failed.set_value();
          throw IoError("server of shard 1 went away");
        }
        failure_thrown.wait_for(5s);  // still in hand when the other lane fails
        other_finished = true;
      },
      {}, /*lanes=*/2);
  for (int p = 1; p >= 0; --p) pipeline.gradient_ready(p);
  try {
    pipeline.wait_all();
    FAIL() << "the failing lane's error did not reach the waiter";
  } catch (const IoError& error) {
    EXPECT_STREQ(error.what(), "server of shard 1 went away");
  }
  EXPECT_TRUE(other_finished) << "wait_all returned while the other lane still held its bucket";
}

TEST(BucketPipeline, RefusesNoLanes) {
  TestArena a({1});
  EXPECT_THROW(BucketPipeline(BucketPlan::contiguous(a.arena, kFloat), [](int) {}, {}, 0), std::exception);
}

TEST(BucketPipeline, StopWithBucketsPendingEndsTheThreadAndFailsTheWaiter) {
  TestArena a({1, 1, 1});
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> entered;
  Recorder recorder;
  auto pipeline = std::make_unique<BucketPipeline>(BucketPlan::contiguous(a.arena, kFloat), [&](int bucket) {
    recorder(bucket);
    if (bucket == 0) {
      entered.set_value();
      released.wait();
    }
  });
  for (int p = 2; p >= 0; --p) pipeline->gradient_ready(p);  // bucket 0 in hand, 1 and 2 queued
  entered.get_future().wait();
  auto waiter = std::async(std::launch::async, [&] { pipeline->wait_all(); });
  auto stopper = std::async(std::launch::async, [&] { pipeline->stop(); });
  std::this_thread::sleep_for(20ms);
  release.set_value();
  ASSERT_EQ(stopper.wait_for(5s), std::future_status::ready) << "stop did not end the thread";
  ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready) << "the waiter still waits after stop";
  EXPECT_THROW(waiter.get(), IoError);
  EXPECT_EQ(recorder.seen(), std::vector<int>{0}) << "queued buckets went after stop";
  pipeline.reset();  // stop again in the destructor: idempotent
}

}  // namespace
}  // namespace dtbench
