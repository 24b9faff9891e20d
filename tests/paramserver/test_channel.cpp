// The control channel of parameter-server workers: broadcast, gather and a barrier through shard
// 0, as MPI would do them; a worker that never answers is an IoError in bounded time. Waiting
// fetches are answered when their value is published, so a barrier's workers leave it together.
#include <chrono>
#include <thread>

#include "comm/registry.h"
#include "paramserver/control_store.h"
#include "paramserver/register.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

TEST_F(PsTest, ControlChannelCollectives) {
  constexpr int kWorld = 3;
  ServerSet servers = start_servers(2, kWorld, PsMode::Sync, sgd_momentum());
  const auto errors = run_workers(kWorld, [&](int rank) {
    auto channel = make_ps_channel(transport_options(servers, PsMode::Sync, rank, kWorld), rank, kWorld);
    EXPECT_EQ(channel->rank(), rank);
    EXPECT_EQ(channel->world(), kWorld);
    for (int round = 0; round < 3; ++round) {
      EXPECT_EQ(channel->broadcast(fmt::format("run-dir-{}-from-{}", round, rank)), fmt::format("run-dir-{}-from-0", round));
      const auto gathered = channel->gather(fmt::format("report of {}", rank));
      if (rank == 0) {
        EXPECT_EQ(gathered, (std::vector<std::string>{"report of 0", "report of 1", "report of 2"}));
      } else {
        EXPECT_TRUE(gathered.empty());
      }
    }
  });
  for (const auto& error : errors) EXPECT_EQ(error, "");
}

TEST_F(PsTest, ControlChannelNamesTheWorkerItWaitedFor) {
  ServerSet servers = start_servers(1, 2, PsMode::Sync, sgd_momentum());
  PsTransportOptions options = transport_options(servers, PsMode::Sync, 0, 2);
  options.timeout_seconds = 0.5 * kTimeScale;
  auto channel = make_ps_channel(options, 0, 2);
  try {
    channel->gather("alone");
    FAIL() << "gathered from a worker that never published";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find("worker 1's gather/0/1"), std::string::npos) << error.what();
  }
}

// What a waiting Fetch is handed, and when.
class RecordingWaiter : public ControlWaiter {
 public:
  void deliver(std::string value) override { values.push_back(std::move(value)); }
  std::vector<std::string> values;
};

TEST(ControlStoreWaiting, APublishHandsTheValueToItsWaitersUntilOneErasesIt) {
  ControlStore store;
  RecordingWaiter reader, taker, late;
  EXPECT_FALSE(store.fetch_or_wait("name", false, &reader));
  EXPECT_FALSE(store.fetch_or_wait("name", true, &taker));
  EXPECT_FALSE(store.fetch_or_wait("name", true, &late));
  EXPECT_FALSE(store.fetch_or_wait("other", false, nullptr));  // no waiter: nothing kept
  EXPECT_EQ(store.waiting(), 3);
  ASSERT_TRUE(store.publish("name", "value").ok());
  EXPECT_EQ(reader.values, std::vector<std::string>{"value"});
  EXPECT_EQ(taker.values, std::vector<std::string>{"value"});
  EXPECT_TRUE(late.values.empty()) << "the erasing waiter before it took the value";
  EXPECT_EQ(store.total_bytes(), 0);
  EXPECT_FALSE(store.fetch("name", false));
  EXPECT_FALSE(store.forget(&taker)) << "delivered: no longer waiting";
  EXPECT_TRUE(store.forget(&late));
  EXPECT_EQ(store.waiting(), 0);
  // Published before anyone asks: handed over at once, as a plain fetch.
  ASSERT_TRUE(store.publish("early", "there").ok());
  EXPECT_EQ(store.fetch_or_wait("early", false, &late), "there");
  EXPECT_EQ(store.waiting(), 0);
}

// Three workers, the last 0.3 s late: each leaves the barrier after the last arrived, and all
// within a few milliseconds of each other (a fetch the server holds ends when its value comes).
TEST_F(PsTest, ControlChannelBarrierReleasesEveryWorkerTogether) {
  constexpr int kWorld = 3;
  ServerSet servers = start_servers(1, kWorld, PsMode::Async, sgd_momentum());
  using Clock = std::chrono::steady_clock;
  std::vector<Clock::time_point> left(kWorld);
  Clock::time_point last_arrived;
  const auto errors = run_workers(kWorld, [&](int rank) {
    auto channel = make_ps_channel(transport_options(servers, PsMode::Async, rank, kWorld), rank, kWorld);
    if (rank == kWorld - 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      last_arrived = Clock::now();
    }
    channel->barrier();
    left[static_cast<size_t>(rank)] = Clock::now();
  });
  for (const auto& error : errors) EXPECT_EQ(error, "");
  const auto [first, last] = std::minmax_element(left.begin(), left.end());
  EXPECT_GE(*first, last_arrived) << "a worker left before the last arrived";
  EXPECT_LT(std::chrono::duration<double>(*last - *first).count(), 0.025 * kTimeScale)
      << "the workers left the barrier apart";
}

// A fetch that waits for a value nobody publishes ends empty once its wait is over, not before.
TEST_F(PsTest, AWaitingFetchOfAValueNeverPublishedEndsEmptyAfterItsWait) {
  ServerSet servers = start_servers(1, 1, PsMode::Sync, sgd_momentum());
  PsConnection connection(connection_options(client_options(transport_options(servers, PsMode::Sync, 0, 1), 0, 1), 0));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(connection.fetch("test-run", "never", false, 0.3));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(waited, 0.29);
  EXPECT_LT(waited, 2.0 * kTimeScale);
}

TEST_F(PsTest, RegistryBuildsBothTransports) {
  ServerSet servers = start_servers(1, 1, PsMode::Async, sgd_momentum());
  register_ps_transports(transport_options(servers, PsMode::Sync, 0, 1));
  EXPECT_EQ(make_transport("ps-sync", {})->name(), "ps-sync");
  // The blueprint's optimizer goes with it: the servers' own (another is refused, test_failure.cpp).
  auto transport = make_transport("ps-async", {.optimizer = sgd_momentum()});
  EXPECT_EQ(transport->name(), "ps-async");
  auto model = small_model();
  transport->start(*model);
  compute_gradients(*model, make_batch(3, 4));
  transport->finish_step(*model, 0);
  EXPECT_EQ(servers[0].version(), 1);
}

}  // namespace
}  // namespace dtbench::pstest
