// A run whose workers die or never come must not leave servers behind, nor a worker that finishes
// as if nothing happened: a sync server whose step a silent worker aborted ends, saying why in
// server-<shard>.json; a worker whose peer never reports through the control channel fails, naming it.
#include <filesystem>
#include <fstream>
#include <future>

#include "core/util/clock.h"
#include "paramserver/register.h"
#include "ps_fixture.h"
#include "raw_client.h"

namespace dtbench::pstest {
namespace {

namespace fs = std::filesystem;

class Lifetime : public PsDirTest {
 protected:
  nlohmann::json server_report() {
    std::ifstream in(dir_ / "server-0.json");
    return in ? nlohmann::json::parse(in) : nlohmann::json();
  }
};

TEST_F(Lifetime, SyncServerEndsWhenAWorkerIsSilentPastTheTimeout) {
  constexpr double kTimeout = 1.0 * kTimeScale;
  ServerSet servers = start_servers(1, 2, PsMode::Sync, sgd_momentum(), [&](ParameterServerOptions& o) {
    o.timeout_seconds = kTimeout;
    o.output_dir = dir_.string();
    o.checkpoints = false;
  });
  const std::string token = servers[0].auth_token();
  RawClient raw(servers[0].address());
  ASSERT_TRUE(raw.register_worker(token, 0, 2).ok());
  ASSERT_TRUE(raw.register_worker(token, 1, 2).ok());
  const KeyIndex index = KeyIndex::in_shard(servers[0].placement(), 0);
  const grpc::Status push = raw.push(token, whole_push(index, 0, 0, 0.5f));  // worker 1 never pushes
  EXPECT_EQ(push.error_code(), grpc::StatusCode::ABORTED) << push.error_message();
  EXPECT_TRUE(servers[0].wait_for(5.0 * kTimeScale)) << "the server goes on serving a run that cannot go on";
  servers[0].stop();
  const nlohmann::json report = server_report();
  EXPECT_EQ(report.value("status", ""), "failed") << report.dump();
  EXPECT_NE(report.value("error", "").find("worker(s) 1 did not push"), std::string::npos) << report.dump();
}

TEST_F(Lifetime, RegisteredWorkersSilentPastTheIdleTimeoutEndTheServer) {
  ServerSet servers = start_servers(1, 2, PsMode::Async, sgd_momentum(), [&](ParameterServerOptions& o) {
    o.idle_timeout_seconds = 1.0 * kTimeScale;
    o.output_dir = dir_.string();
    o.checkpoints = false;
  });
  RawClient raw(servers[0].address());
  ASSERT_TRUE(raw.register_worker(servers[0].auth_token(), 0, 2).ok());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(servers[0].wait_for(6.0 * kTimeScale)) << "an idle server did not end";
  EXPECT_GT(seconds_since(start), 0.8 * kTimeScale);
  servers[0].stop();
  const nlohmann::json report = server_report();
  EXPECT_EQ(report.value("status", ""), "failed") << report.dump();
  EXPECT_NE(report.value("error", "").find("no worker has been heard from"), std::string::npos) << report.dump();
}

TEST_F(Lifetime, AWorkerWhosePeerNeverReportsFailsNamingIt) {
  ServerSet servers = start_servers(1, 2, PsMode::Async, sgd_momentum());
  PsTransportOptions options = transport_options(servers, PsMode::Async, 1, 2);
  options.timeout_seconds = 0.5 * kTimeScale;
  auto channel = make_ps_channel(options, 1, 2);
  const auto start = std::chrono::steady_clock::now();
  try {
    channel->gather("the report of worker 1");  // worker 0, who collects it, is gone
    FAIL() << "a gather without worker 0 succeeded";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find("worker 0"), std::string::npos) << error.what();
  }
  EXPECT_LT(seconds_since(start), 5.0 * kTimeScale);
}

}  // namespace
}  // namespace dtbench::pstest
