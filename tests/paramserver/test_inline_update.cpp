// The updater's inline path (shard_updater.h): a small shard's update is made on the thread that
// submits the gradient completing a step, and answers every push of the step from there; a large
// shard's goes to the update thread; a step begun on a gRPC thread still times out on time; every
// answer carries the snapshot of the version its update made.
#include <future>
#include <thread>

#include "core/util/clock.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

constexpr int64_t kCount = 8;

Gradient gradient(int worker, int64_t version, float value) {
  Gradient g{worker, version, std::unique_ptr<float[]>(new float[kCount]), SteadyClock::now()};
  std::fill_n(g.values.get(), kCount, value);
  return g;
}

ShardState zeros() {
  ShardState state;
  state.values.assign(kCount, 0.0f);
  return state;
}

ShardUpdaterOptions sync_options(int64_t inline_float_count, double timeout_seconds = 10.0) {
  ShardUpdaterOptions o;
  o.mode = PsMode::Sync;
  o.worker_count = 2;
  o.timeout_seconds = timeout_seconds;
  o.inline_float_count = inline_float_count;
  return o;
}

struct Answer {
  PushOutcome outcome;
  std::thread::id thread;
};

std::future<Answer> submit(ShardUpdater& updater, Gradient g) {
  auto promise = std::make_shared<std::promise<Answer>>();
  auto future = promise->get_future();
  updater.submit(std::move(g), [promise](const PushOutcome& outcome) {
    promise->set_value({outcome, std::this_thread::get_id()});
  });
  return future;
}

// Both workers' pushes of one step, the second from this thread; the answers.
std::vector<Answer> one_step(ShardUpdater& updater) {
  std::future<Answer> first;
  std::thread other([&] { first = submit(updater, gradient(0, 0, 1.0f)); });
  other.join();
  auto second = submit(updater, gradient(1, 0, 3.0f));
  return {first.get(), second.get()};
}

const OptimizerConfig kPlain{.name = "sgd", .learning_rate = 1.0f};

TEST(InlineUpdate, ASmallShardIsUpdatedAndAnsweredOnTheThreadThatCompletesTheStep) {
  ShardUpdater updater(zeros(), kPlain, sync_options(kCount));
  const std::vector<Answer> answers = one_step(updater);
  for (const Answer& answer : answers) {
    ASSERT_TRUE(answer.outcome.status.ok()) << answer.outcome.status.error_message();
    EXPECT_EQ(answer.thread, std::this_thread::get_id()) << "answered on another thread";
    EXPECT_EQ(answer.outcome.version, 1);
    ASSERT_NE(answer.outcome.snapshot, nullptr);
    EXPECT_EQ(answer.outcome.snapshot->version, 1);
    EXPECT_EQ(answer.outcome.snapshot->values, std::vector<float>(kCount, -2.0f));  // 0 - mean(1, 3)
  }
  EXPECT_EQ(updater.version(), 1);
}

TEST(InlineUpdate, ALargerShardIsUpdatedOnTheUpdateThread) {
  ShardUpdater updater(zeros(), kPlain, sync_options(kCount - 1));
  const std::vector<Answer> answers = one_step(updater);
  for (const Answer& answer : answers) {
    ASSERT_TRUE(answer.outcome.status.ok()) << answer.outcome.status.error_message();
    EXPECT_NE(answer.thread, std::this_thread::get_id()) << "updated on the submitting thread";
    EXPECT_EQ(answer.outcome.snapshot->values, std::vector<float>(kCount, -2.0f));
  }
}

TEST(InlineUpdate, AStepBegunInlineStillFailsAtItsTimeout) {
  const double timeout = 0.3 * kTimeScale;
  ShardUpdater updater(zeros(), kPlain, sync_options(kCount, timeout));
  std::this_thread::sleep_for(std::chrono::duration<double>(0.5 * timeout));  // the update thread is asleep
  const auto start = SteadyClock::now();
  auto alone = submit(updater, gradient(0, 0, 1.0f));  // worker 1 never pushes
  ASSERT_EQ(alone.wait_for(std::chrono::duration<double>(0.5 * timeout)), std::future_status::timeout);
  ASSERT_EQ(alone.wait_for(std::chrono::duration<double>(3 * timeout)), std::future_status::ready);
  const double waited = seconds_between(start, SteadyClock::now());
  const Answer answer = alone.get();
  EXPECT_EQ(answer.outcome.status.error_code(), PushCode::Aborted);
  EXPECT_NE(answer.outcome.status.error_message().find("worker(s) 1 did not push"), std::string::npos)
      << answer.outcome.status.error_message();
  EXPECT_GE(waited, timeout * 0.99);
  EXPECT_EQ(updater.version(), 0);
}

}  // namespace
}  // namespace dtbench::pstest
