// ps-sync is an allreduce with the update on the server: W workers (threads) through S shards end
// with the weights of one worker applying the mean of their gradients with core's optimizer — also
// when each shard is pushed and pulled as backward finishes it (buckets with overlap).
#include <chrono>
#include <cmath>
#include <thread>

#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

struct SyncCase {
  int workers;
  int shards;
  PlacementPolicy placement;
  bool adam;
  bool buckets = false;
};

std::string case_name(const ::testing::TestParamInfo<SyncCase>& info) {
  return fmt::format("w{}_s{}_{}_{}{}", info.param.workers, info.param.shards, placement_name(info.param.placement),
                     info.param.adam ? "adam" : "sgd", info.param.buckets ? "_buckets" : "");
}

class SyncEquivalence : public PsTest, public ::testing::WithParamInterface<SyncCase> {};

constexpr int kSteps = 4;
constexpr int64_t kBatch = 8;

Batch batch_for(int worker, int step) { return make_batch(1000 + 10 * static_cast<uint64_t>(step) + worker, kBatch); }

// One worker, core only: gradient = mean of the workers' gradients (summed in worker order), then
// core's optimizer over the whole arena — what ring / mpi compute.
std::vector<float> reference_weights(int workers, const OptimizerConfig& config) {
  auto model = small_model();
  ParamArena& arena = model->arena();
  auto optimizer = make_optimizer(config, arena.count());
  std::vector<float> mean(static_cast<size_t>(arena.count()));
  for (int step = 0; step < kSteps; ++step) {
    for (int w = 0; w < workers; ++w) {
      compute_gradients(*model, batch_for(w, step));
      const auto grads = arena.grads();
      for (size_t i = 0; i < mean.size(); ++i) mean[i] = w == 0 ? grads[i] : mean[i] + grads[i];
    }
    if (workers > 1) {
      for (float& g : mean) g *= 1.0f / static_cast<float>(workers);
    }
    optimizer->step(arena.values(), mean);
  }
  return values_of(*model);
}

TEST_P(SyncEquivalence, EndsWithTheAveragedUpdateOfOneWorker) {
  const SyncCase c = GetParam();
  const OptimizerConfig optimizer = c.adam ? adam() : sgd_momentum();
  ServerSet servers = start_servers(c.shards, c.workers, PsMode::Sync, optimizer, [&](ParameterServerOptions& o) {
    o.placement.policy = c.placement;
  });
  std::vector<std::vector<float>> finals(static_cast<size_t>(c.workers));
  std::vector<std::vector<int64_t>> versions(static_cast<size_t>(c.workers));
  const auto errors = run_workers(c.workers, [&](int rank) {
    // A different seed: the worker must take the servers' initial weights, not its own.
    auto model = small_model(kSeed + 100 + static_cast<uint64_t>(rank));
    PsTransportOptions options = transport_options(servers, PsMode::Sync, rank, c.workers);
    options.placement = c.placement;
    if (c.buckets) {
      options.bucket_bytes = 1;
      options.overlap = true;
    }
    PsTransport transport(options);
    transport.start(*model);
    double hidden = 0.0;  // buckets: how much of it depends on the scheduler (fc1 spans every shard here)
    for (int step = 0; step < kSteps; ++step) {
      compute_gradients(*model, batch_for(rank, step));
      const SyncTimes times = transport.finish_step(*model, step);
      EXPECT_GT(times.bytes_sent, 0);
      EXPECT_GT(times.bytes_received, 0);
      if (!c.buckets) {
        EXPECT_GE(times.comm, times.push);
      }
      // Buckets: a push, a wait and a pull on the timeline per shard.
      EXPECT_EQ(times.spans.size(), c.buckets ? 3u * static_cast<size_t>(c.shards) : 3u);
      hidden += times.hidden;
    }
    if (!c.buckets) {
      EXPECT_EQ(hidden, 0.0);
    }
    EXPECT_EQ(transport.summary()["overlap"], c.buckets);
    versions[static_cast<size_t>(rank)] = transport.versions();
    transport.stop(*model);
    EXPECT_EQ(transport.summary()["mode"], "sync");
    finals[static_cast<size_t>(rank)] = values_of(*model);
  });
  for (const auto& error : errors) ASSERT_EQ(error, "");

  const std::vector<float> expected = reference_weights(c.workers, optimizer);
  for (int rank = 0; rank < c.workers; ++rank) {
    const auto& got = finals[static_cast<size_t>(rank)];
    ASSERT_EQ(got.size(), expected.size());
    double worst = 0.0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - double(expected[i])));
    EXPECT_LT(worst, 1e-5) << "worker " << rank;
    EXPECT_EQ(got, finals[0]) << "sync workers must hold identical weights";
    for (int64_t version : versions[static_cast<size_t>(rank)]) EXPECT_EQ(version, kSteps);
  }
  // Every worker said goodbye, so the servers are stopping.
  for (auto& server : servers.servers) {
    EXPECT_TRUE(server->wait_for(5.0));
    EXPECT_EQ(server->version(), kSteps);
    const auto stats = server->stats_json();
    EXPECT_EQ(stats["updates"]["updates_applied"], kSteps);
    EXPECT_EQ(stats["updates"]["gradients_accepted"], kSteps * c.workers);
  }
}

// With buckets every shard of a step is in flight at once: a shard waiting at its server (here for
// a late worker) holds back none of the others. One after another, every worker sent to the same
// server at the same time while the others' links idled (AlexNet on 4 emulated hosts: 7.2 s a step
// against 2.5 s with every shard at once).
TEST_F(PsTest, BucketsPushEveryShardWithoutWaitingForAnothersAnswer) {
  constexpr int kWorkers = 2, kShards = 2;
  ServerSet servers = start_servers(kShards, kWorkers, PsMode::Sync, sgd_momentum());
  constexpr auto kLate = std::chrono::milliseconds(300);
  std::vector<CommSpan> first_step;
  const auto errors = run_workers(kWorkers, [&](int rank) {
    auto model = small_model();
    PsTransportOptions options = transport_options(servers, PsMode::Sync, rank, kWorkers);
    options.bucket_bytes = 1;
    options.overlap = true;
    PsTransport transport(options);
    transport.start(*model);
    if (rank == 1) std::this_thread::sleep_for(kLate);  // worker 0's pushes wait for this one's
    compute_gradients(*model, batch_for(rank, 0));
    const SyncTimes times = transport.finish_step(*model, 0);
    if (rank == 0) first_step.assign(times.spans.begin(), times.spans.end());
    transport.stop(*model);
  });
  for (const auto& error : errors) ASSERT_EQ(error, "");
  ASSERT_EQ(first_step.size(), 3u * kShards);
  std::chrono::steady_clock::time_point last_push_start{}, first_pull_end = std::chrono::steady_clock::time_point::max();
  for (const CommSpan& span : first_step) {
    if (std::string(span.what) == "push") last_push_start = std::max(last_push_start, span.start);
    if (std::string(span.what) == "pull") first_pull_end = std::min(first_pull_end, span.end);
  }
  EXPECT_LT(last_push_start, first_pull_end)
      << "a shard's push began only once another shard's answer was in: "
      << std::chrono::duration<double, std::milli>(last_push_start - first_pull_end).count() << " ms after it";
}

INSTANTIATE_TEST_SUITE_P(PsSync, SyncEquivalence,
                         ::testing::Values(SyncCase{2, 2, PlacementPolicy::Balanced, false},
                                           SyncCase{2, 1, PlacementPolicy::Balanced, false},
                                           SyncCase{2, 2, PlacementPolicy::Hash, true},
                                           SyncCase{3, 3, PlacementPolicy::Balanced, true},
                                           SyncCase{2, 2, PlacementPolicy::Balanced, false, true},
                                           SyncCase{2, 1, PlacementPolicy::Balanced, false, true},
                                           SyncCase{2, 2, PlacementPolicy::Hash, true, true},
                                           SyncCase{3, 3, PlacementPolicy::Balanced, true, true}),
                         case_name);

}  // namespace
}  // namespace dtbench::pstest
