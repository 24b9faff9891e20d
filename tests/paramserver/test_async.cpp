// ps-async: gradients applied as they arrive, staleness recorded; the loss falls on a small fixed
// problem; bounded staleness holds a worker that runs ahead.
#include <future>

#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

double loss_on(Model& model, const Batch& batch) {
  const Tensor& logits = model.forward(batch.images, Mode::Eval);
  return softmax_cross_entropy(logits, batch.labels, nullptr).loss;
}

// With `buckets`, each shard is pushed and pulled as backward finishes it.
void expect_async_loss_falls(bool buckets) {
  constexpr int kWorkers = 2, kSteps = 40;
  ServerSet servers = start_servers(2, kWorkers, PsMode::Async, sgd_momentum());
  // The fixed problem: the workers' own training batches.
  std::vector<Batch> problem;
  for (int rank = 0; rank < kWorkers; ++rank) {
    for (int b = 0; b < 8; ++b) problem.push_back(make_batch(100 * static_cast<uint64_t>(rank) + b, 32));
  }
  const auto mean_loss = [&](Model& model) {
    double sum = 0.0;
    for (const Batch& batch : problem) sum += loss_on(model, batch);
    return sum / static_cast<double>(problem.size());
  };
  auto initial = small_model();
  const double initial_loss = mean_loss(*initial);
  std::vector<double> final_loss(kWorkers);
  std::vector<nlohmann::json> summaries(kWorkers);
  const auto errors = run_workers(kWorkers, [&](int rank) {
    auto model = small_model();
    PsTransportOptions options = transport_options(servers, PsMode::Async, rank, kWorkers);
    options.bucket_bytes = buckets ? 1 : 0;
    options.overlap = buckets;
    PsTransport transport(options);
    transport.start(*model);
    for (int step = 0; step < kSteps; ++step) {
      compute_gradients(*model, problem[static_cast<size_t>(8 * rank + step % 8)]);
      const SyncTimes times = transport.finish_step(*model, step);
      EXPECT_EQ(times.spans.size(), buckets ? 6u : 3u);  // push, wait, pull: per shard with buckets
    }
    final_loss[static_cast<size_t>(rank)] = mean_loss(*model);
    transport.stop(*model);
    summaries[static_cast<size_t>(rank)] = transport.summary();
  });
  for (const auto& error : errors) ASSERT_EQ(error, "");
  for (int rank = 0; rank < kWorkers; ++rank) {
    EXPECT_LT(final_loss[static_cast<size_t>(rank)], 0.7 * initial_loss)
        << "initial " << initial_loss << ", final " << final_loss[static_cast<size_t>(rank)];
    EXPECT_EQ(summaries[static_cast<size_t>(rank)]["mode"], "async");
    EXPECT_TRUE(summaries[static_cast<size_t>(rank)].contains("staleness"));
    EXPECT_EQ(summaries[static_cast<size_t>(rank)]["overlap"], buckets);
  }
  for (auto& server : servers.servers) {
    EXPECT_EQ(server->version(), kWorkers * kSteps);
    const auto updates = server->stats_json()["updates"];
    EXPECT_EQ(updates["updates_applied"], kWorkers * kSteps);
    int64_t counted = 0;
    for (const auto& [staleness, count] : updates["staleness"]["histogram"].items()) counted += count.get<int64_t>();
    EXPECT_EQ(counted, kWorkers * kSteps);
  }
}

TEST_F(PsTest, AsyncLossFallsAndStalenessIsRecorded) { expect_async_loss_falls(false); }

TEST_F(PsTest, AsyncWithBucketsLossFallsAndStalenessIsRecorded) { expect_async_loss_falls(true); }

// The updater alone, without gRPC: what sync and async do with gradients as they arrive.
class Updater : public PsTest {
 protected:
  static Gradient gradient(int worker, int64_t version, float value, int64_t count = 8) {
    Gradient g{worker, version, std::unique_ptr<float[]>(new float[static_cast<size_t>(count)]), SteadyClock::now()};
    std::fill_n(g.values.get(), count, value);
    return g;
  }
  static ShardUpdaterOptions options(PsMode mode, int workers, double timeout, int64_t max_staleness = 0) {
    ShardUpdaterOptions o;
    o.mode = mode;
    o.worker_count = workers;
    o.timeout_seconds = timeout;
    o.max_staleness = max_staleness;
    return o;
  }
  static ShardState zeros(int64_t count = 8) {
    ShardState state;
    state.values.assign(static_cast<size_t>(count), 0.0f);
    return state;
  }
  // Submits and returns a future of the outcome.
  static std::future<PushOutcome> submit(ShardUpdater& updater, Gradient g) {
    auto promise = std::make_shared<std::promise<PushOutcome>>();
    auto future = promise->get_future();
    updater.submit(std::move(g), [promise](const PushOutcome& outcome) { promise->set_value(outcome); });
    return future;
  }
  static bool ready(std::future<PushOutcome>& future, double seconds = 0.1) {
    return future.wait_for(std::chrono::duration<double>(seconds)) == std::future_status::ready;
  }
};

TEST_F(Updater, SyncAveragesOnceAllArriveInAnyOrder) {
  const OptimizerConfig plain{.name = "sgd", .learning_rate = 1.0f};
  ShardUpdater updater(zeros(), plain, options(PsMode::Sync, 3, 5.0));
  auto second = submit(updater, gradient(2, 0, 3.0f));
  auto first = submit(updater, gradient(0, 0, 1.0f));
  EXPECT_FALSE(ready(first)) << "answered before every worker pushed";
  auto last = submit(updater, gradient(1, 0, 2.0f));
  for (auto* f : {&first, &second, &last}) {
    ASSERT_TRUE(ready(*f, 5.0));
    const PushOutcome outcome = f->get();
    EXPECT_TRUE(outcome.status.ok()) << outcome.status.error_message();
    EXPECT_EQ(outcome.version, 1);
  }
  EXPECT_EQ(updater.snapshot()->values, std::vector<float>(8, -2.0f));  // 0 - 1.0 * mean(1, 2, 3)
}

TEST_F(Updater, AsyncScalesByWorkersAndMeasuresStaleness) {
  const OptimizerConfig plain{.name = "sgd", .learning_rate = 1.0f};
  ShardUpdater updater(zeros(), plain, options(PsMode::Async, 2, 5.0));
  EXPECT_EQ(submit(updater, gradient(0, 0, 2.0f)).get().staleness, 0);
  const PushOutcome late = submit(updater, gradient(1, 0, 4.0f)).get();  // computed on version 0, applied at 1
  EXPECT_EQ(late.staleness, 1);
  EXPECT_EQ(late.version, 2);
  EXPECT_EQ(updater.snapshot()->values, std::vector<float>(8, -3.0f));  // -(2 + 4) / 2
  const PushOutcome ahead = submit(updater, gradient(0, 7, 1.0f)).get();
  EXPECT_EQ(ahead.status.error_code(), PushCode::InvalidArgument);
  EXPECT_EQ(updater.version(), 2);
  EXPECT_EQ(updater.stats_json()["staleness"]["histogram"], nlohmann::json({{"0", 1}, {"1", 1}}));
}

TEST_F(Updater, BoundedStalenessHoldsAWorkerThatRunsAhead) {
  const OptimizerConfig plain{.name = "sgd", .learning_rate = 0.1f};
  ShardUpdater updater(zeros(), plain,
                       options(PsMode::Async, 2, 0.5 * kTimeScale, 1));
  ASSERT_TRUE(submit(updater, gradient(0, 0, 1.0f)).get().status.ok());  // one ahead: allowed
  auto held = submit(updater, gradient(0, 1, 1.0f));                     // two ahead: held
  EXPECT_FALSE(ready(held, 0.1));
  ASSERT_TRUE(submit(updater, gradient(1, 0, 1.0f)).get().status.ok());  // worker 1 catches up
  ASSERT_TRUE(ready(held, 1.0 * kTimeScale));
  EXPECT_TRUE(held.get().status.ok());
  // Worker 0 runs ahead again and worker 1 never comes: DEADLINE_EXCEEDED naming worker 1.
  auto stuck = submit(updater, gradient(0, 3, 1.0f));
  ASSERT_TRUE(ready(stuck, 3.0 * kTimeScale));
  const PushOutcome outcome = stuck.get();
  EXPECT_EQ(outcome.status.error_code(), PushCode::DeadlineExceeded);
  EXPECT_NE(outcome.status.error_message().find("worker(s) 1"), std::string::npos) << outcome.status.error_message();
  // A worker that is done no longer holds the others back.
  updater.worker_done(1);
  EXPECT_TRUE(submit(updater, gradient(0, 4, 1.0f)).get().status.ok());
}

TEST_F(Updater, StoppingAnswersEverythingPending) {
  const OptimizerConfig plain{.name = "sgd", .learning_rate = 1.0f};
  ShardUpdater updater(zeros(), plain, options(PsMode::Sync, 2, 60.0));
  auto waiting = submit(updater, gradient(0, 0, 1.0f));
  EXPECT_FALSE(ready(waiting));
  updater.stop("test over");
  ASSERT_TRUE(ready(waiting, 1.0));
  const PushOutcome outcome = waiting.get();
  EXPECT_EQ(outcome.status.error_code(), PushCode::Unavailable);
  EXPECT_NE(outcome.status.error_message().find("test over"), std::string::npos);
  EXPECT_EQ(submit(updater, gradient(1, 0, 1.0f)).get().status.error_code(), PushCode::Unavailable);
  EXPECT_EQ(updater.version(), 0);
}

}  // namespace
}  // namespace dtbench::pstest
