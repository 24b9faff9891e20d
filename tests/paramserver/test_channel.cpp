// The control channel of parameter-server workers: broadcast and gather through shard 0,
// as MPI would do them; a worker that never answers is an IoError in bounded time.
#include "comm/registry.h"
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

TEST_F(PsTest, RegistryBuildsBothTransports) {
  ServerSet servers = start_servers(1, 1, PsMode::Async, sgd_momentum());
  register_ps_transports(transport_options(servers, PsMode::Sync, 0, 1));
  EXPECT_EQ(make_transport("ps-sync", {})->name(), "ps-sync");
  auto transport = make_transport("ps-async", {});
  EXPECT_EQ(transport->name(), "ps-async");
  auto model = small_model();
  transport->start(*model);
  compute_gradients(*model, make_batch(3, 4));
  transport->finish_step(*model, 0);
  EXPECT_EQ(servers[0].version(), 1);
}

}  // namespace
}  // namespace dtbench::pstest
