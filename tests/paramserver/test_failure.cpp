// Failures end in bounded time with errors that say who and where: a worker that stops in sync
// mode fails the others' step after the server's timeout, naming it; a worker that fails says so
// and ends the run at once, with its reason; a server that is gone fails the worker's next call
// after a few retries, naming the server.
#include <chrono>
#include <memory>
#include <thread>

#include "core/optim/optimizer_settings.h"
#include "core/util/clock.h"
#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

using Clock = std::chrono::steady_clock;

// A sync worker of `world` on `servers`, registered and holding the servers' first weights in
// `model`, its calls timing out after `timeout` seconds.
std::unique_ptr<PsTransport> started_sync_worker(ServerSet& servers, Model& model, int rank, int world,
                                                 double timeout) {
  PsTransportOptions options = transport_options(servers, PsMode::Sync, rank, world);
  options.timeout_seconds = timeout;
  auto transport = std::make_unique<PsTransport>(options);
  transport->start(model);
  return transport;
}

TEST_F(PsTest, AWorkerThatStopsFailsTheOthersStepWithinTheTimeout) {
  constexpr double kTimeout = 1.0 * kTimeScale;
  ServerSet servers = start_servers(2, 3, PsMode::Sync, sgd_momentum(), [](ParameterServerOptions& o) {
    o.timeout_seconds = kTimeout;
  });
  std::vector<double> failed_after(3, -1.0);
  const auto errors = run_workers(3, [&](int rank) {
    auto model = small_model();
    const std::unique_ptr<PsTransport> worker = started_sync_worker(servers, *model, rank, 3, kTimeout);
    PsTransport& transport = *worker;
    for (int step = 0; step < 3; ++step) {
      if (rank == 2 && step == 1) return;  // worker 2 vanishes without a word
      compute_gradients(*model, make_batch(10 * step + rank, 4));
      const auto start = Clock::now();
      try {
        transport.finish_step(*model, step);
      } catch (...) {
        failed_after[static_cast<size_t>(rank)] = seconds_since(start);
        throw;
      }
    }
  });
  EXPECT_EQ(errors[2], "");
  for (int rank : {0, 1}) {
    const std::string& error = errors[static_cast<size_t>(rank)];
    EXPECT_NE(error.find("ABORTED"), std::string::npos) << error;
    EXPECT_NE(error.find("worker(s) 2 did not push"), std::string::npos) << error;
    EXPECT_NE(error.find("parameter server 127.0.0.1:"), std::string::npos) << error;
    EXPECT_GT(failed_after[static_cast<size_t>(rank)], 0.5 * kTimeout);
    EXPECT_LT(failed_after[static_cast<size_t>(rank)], 2 * kTimeout + 1.0);
  }
  for (auto& server : servers.servers) {
    EXPECT_EQ(server->version(), 1) << "the failed step must not be applied";
    EXPECT_EQ(server->stats_json()["updates"]["steps_failed"], 1);
  }
}

TEST_F(PsTest, AWorkerThatFailsEndsTheRunAtOnceWithItsReason) {
  // A timeout far beyond the test's bound: the others must learn of the failure, not wait it out.
  constexpr double kTimeout = 30.0;
  ServerSet servers = start_servers(2, 2, PsMode::Sync, sgd_momentum(), [](ParameterServerOptions& o) {
    o.timeout_seconds = kTimeout;
    o.idle_timeout_seconds = kTimeout;
  });
  // As `dtbench ps` does: wait until a server is asked to stop, then stop it.
  std::vector<std::thread> stoppers;
  for (auto& server : servers.servers) {
    stoppers.emplace_back([&server] {
      if (server->wait_for(2 * kTimeout)) server->stop();
    });
  }
  double failed_after = -1.0;
  const auto errors = run_workers(2, [&](int rank) {
    auto model = small_model();
    const std::unique_ptr<PsTransport> worker = started_sync_worker(servers, *model, rank, 2, kTimeout);
    PsTransport& transport = *worker;
    if (rank == 1) {
      // Once worker 0's push is on every server, waiting for this worker's.
      const auto deadline = Clock::now() + std::chrono::seconds(10);
      for (auto& server : servers.servers) {
        while (server->stats_json()["traffic"]["push_calls"].get<int64_t>() < 1 && Clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
      }
      transport.abandon("diverged: loss is NaN at step 0");
      return;
    }
    compute_gradients(*model, make_batch(rank, 4));
    const auto start = Clock::now();
    try {
      transport.finish_step(*model, 0);
    } catch (...) {
      failed_after = seconds_since(start);
      throw;
    }
  });
  for (auto& stopper : stoppers) stopper.join();
  EXPECT_EQ(errors[1], "");
  EXPECT_NE(errors[0].find("ABORTED"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("worker 1 failed: diverged: loss is NaN at step 0"), std::string::npos) << errors[0];
  EXPECT_GE(failed_after, 0.0);
  EXPECT_LT(failed_after, 5.0 * kTimeScale) << "the worker waited for the step's timeout";
  for (auto& server : servers.servers) {
    EXPECT_NE(server->failure().find("worker 1 failed: diverged: loss is NaN"), std::string::npos)
        << server->failure();
    EXPECT_EQ(server->version(), 0) << "the failed step must not be applied";
  }
}

TEST_F(PsTest, AWorkerWhoseBlueprintAsksForAnotherOptimizerIsRefusedNamingTheDifference) {
  ServerSet servers = start_servers(2, 1, PsMode::Sync, sgd_momentum());
  auto model = small_model();
  PsTransportOptions options = transport_options(servers, PsMode::Sync, 0, 1);
  OptimizerConfig wanted = sgd_momentum();
  wanted.learning_rate = 0.5f;  // the servers apply the updates: this would be silently ignored
  options.optimizer = optimizer_settings(wanted);
  try {
    PsTransport transport(options);
    transport.start(*model);
    FAIL() << "a worker asking for another learning rate than its servers' was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("optimizer.lr 0.05 on the server, 0.5 here"), std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("parameter server 127.0.0.1:"), std::string::npos) << error.what();
  }
  options.optimizer = optimizer_settings(sgd_momentum());
  PsTransport transport(options);
  EXPECT_NO_THROW(transport.start(*model)) << "the servers' own optimizer was refused";
}

TEST_F(PsTest, WhenConfiguredAMissingWorkerIsDroppedAndTheOthersGoOn) {
  constexpr double kTimeout = 1.0 * kTimeScale;
  ServerSet servers = start_servers(2, 3, PsMode::Sync, sgd_momentum(), [](ParameterServerOptions& o) {
    o.timeout_seconds = kTimeout;
    o.drop_missing_workers = true;
  });
  std::vector<std::vector<float>> weights(3);
  const auto errors = run_workers(3, [&](int rank) {
    auto model = small_model();
    const std::unique_ptr<PsTransport> worker = started_sync_worker(servers, *model, rank, 3, 4 * kTimeout);
    PsTransport& transport = *worker;
    for (int step = 0; step < 3; ++step) {
      if (rank == 2 && step == 1) return;  // worker 2 vanishes without a word
      compute_gradients(*model, make_batch(10 * step + rank, 4));
      transport.finish_step(*model, step);
    }
    const auto values = model->arena().values();
    weights[static_cast<size_t>(rank)].assign(values.begin(), values.end());
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  EXPECT_EQ(weights[0], weights[1]);
  for (auto& server : servers.servers) {
    EXPECT_EQ(server->version(), 3) << "every step applied, the last two with workers 0 and 1";
    EXPECT_EQ(server->stats_json()["updates"]["workers_dropped"], 1);
    EXPECT_EQ(server->stats_json()["updates"]["steps_failed"], 0);
  }
}

TEST_F(PsTest, AServerThatIsGoneFailsTheNextPushAfterRetries) {
  ServerSet servers = start_servers(2, 1, PsMode::Sync, sgd_momentum());
  const std::string gone = servers[1].address();
  auto model = small_model();
  PsTransportOptions options = transport_options(servers, PsMode::Sync, 0, 1);
  options.retries = 3;
  options.backoff_seconds = 0.05;
  PsTransport transport(options);
  transport.start(*model);
  compute_gradients(*model, make_batch(1, 4));
  transport.finish_step(*model, 0);

  servers.servers[1].reset();  // stopped and gone: its port refuses connections
  compute_gradients(*model, make_batch(2, 4));
  const auto start = Clock::now();
  try {
    transport.finish_step(*model, 1);
    FAIL() << "a push to a stopped server succeeded";
  } catch (const IoError& error) {
    const std::string text = error.what();
    EXPECT_NE(text.find(gone), std::string::npos) << text;
    EXPECT_NE(text.find("UNAVAILABLE"), std::string::npos) << text;
    EXPECT_NE(text.find("4 attempt(s)"), std::string::npos) << text;
  }
  EXPECT_LT(seconds_since(start), 5.0 * kTimeScale);
}

TEST_F(PsTest, AServerThatNeverCameUpFailsRegistrationWithinTheTimeout) {
  std::string address;
  {
    ServerSet once = start_servers(1, 1, PsMode::Sync, sgd_momentum());
    address = once[0].address();
  }  // stopped: nobody listens there now
  auto model = small_model();
  PsTransportOptions options;
  options.servers = {address};
  options.run_id = "test-run";
  options.key_float_count = kKeyFloats;
  options.timeout_seconds = 1.0 * kTimeScale;
  PsTransport transport(options);
  const auto start = Clock::now();
  try {
    transport.start(*model);
    FAIL() << "registered with nobody";
  } catch (const IoError& error) {
    EXPECT_NE(std::string(error.what()).find(address), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("registering worker 0"), std::string::npos) << error.what();
  }
  EXPECT_LT(seconds_since(start), 4.0 * kTimeScale);
}

TEST_F(PsTest, AServerStartedLateIsWaitedFor) {
  // Workers may start before their servers: registration retries for up to timeout_seconds.
  std::string address;
  {
    ServerSet once = start_servers(1, 1, PsMode::Sync, sgd_momentum());
    address = once[0].address();
  }
  std::unique_ptr<ParameterServer> late;
  const std::string token = generate_token();
  std::thread starter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto model = small_model();
    ParameterServerOptions o;
    o.listen = address;
    o.run_id = "test-run";
    o.placement = {1, kKeyFloats, PlacementPolicy::Balanced};
    o.security.auth_token = token;
    late = std::make_unique<ParameterServer>(model->arena(), sgd_momentum(), o);
  });
  auto model = small_model(99);
  PsTransportOptions options;
  options.servers = {address};
  options.security.auth_token = token;
  options.run_id = "test-run";
  options.key_float_count = kKeyFloats;
  options.timeout_seconds = 10.0 * kTimeScale;
  PsTransport transport(options);
  transport.start(*model);
  starter.join();
  EXPECT_EQ(values_of(*model), values_of(*small_model()));
}

}  // namespace
}  // namespace dtbench::pstest
