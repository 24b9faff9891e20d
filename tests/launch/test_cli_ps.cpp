// Parameter servers end to end, as a user runs them: two `dtbench ps` shards and two
// `dtbench train --rank R --world 2` workers as separate processes on loopback. ps-sync ends with
// the weights the ring gives for the same blueprint, and both sides leave their reports. An
// asynchronous run with a straggler is credited its total images over its span, not the sum of
// its workers' rates.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "support/cli_helpers.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;

using testing::read_weights;
using testing::Background;
using testing::only_child;
using testing::Outcome;
using testing::read_json;
using testing::shell;

class ParameterServerCli : public testing::MpirunTest {
 protected:
  // One async shard on loopback for `workers` workers of `blueprint`, in server_. Returns the
  // options that send a worker to it (servers, token, output under root_/ps); empty if it did not
  // start listening.
  std::string start_async_shard(int workers, const std::string& blueprint) {
    server_ = std::make_unique<Background>(std::string(DTBENCH_BINARY) +
                                           " ps --listen 127.0.0.1:0 --shard 0 --shards 1 --workers " +
                                           std::to_string(workers) + " --mode async --timeout-s 20 --output " +
                                           (root_ / "servers").string() + blueprint);
    const std::string address = server_->wait_for(std::regex("listening on (\\S+)"));
    if (address.empty()) return "";
    return " --set transport=ps-async --set ps.servers=" + address +
           " --set ps.auth_token_file=" + (root_ / "servers" / "ps.token").string() +
           " --set output=" + (root_ / "ps").string();
  }
  std::unique_ptr<Background> server_;
};

TEST_F(ParameterServerCli, TwoShardsAndTwoWorkersMatchTheRing) {
  const fs::path data = synth("idx", 640, 64);
  const std::string blueprint = " --set model=mlp --set dataset.path=" + data.string() +
                                " --set steps=12 --set batch=16 --set seed=5 --set threads=1 --set save_weights=true" +
                                " --set optimizer.lr=0.05 --set optimizer.momentum=0.9";
  const Outcome ring = shell(testing::mpirun(2) + " train" + blueprint +
                             " --set transport=ring --set output=" + (root_ / "ring").string());
  ASSERT_EQ(ring.exit_code, 0) << ring.output;

  const std::regex listening("listening on (\\S+)");
  std::vector<std::unique_ptr<Background>> servers;
  std::vector<std::string> addresses;
  for (int shard = 0; shard < 2; ++shard) {
    servers.push_back(std::make_unique<Background>(
        std::string(DTBENCH_BINARY) + " ps --listen 127.0.0.1:0 --shard " + std::to_string(shard) +
        " --shards 2 --workers 2 --mode sync --timeout-s 20 --output " + (root_ / "servers").string() + blueprint));
    addresses.push_back(servers.back()->wait_for(listening));
    ASSERT_FALSE(addresses.back().empty()) << servers.back()->output();
  }
  // The servers share the token the first made in their output directory.
  const std::string ps = " --set transport=ps-sync --set ps.servers=" + addresses[0] + "," + addresses[1] +
                         " --set ps.auth_token_file=" + (root_ / "servers" / "ps.token").string() +
                         " --set output=" + (root_ / "ps").string();
  std::vector<std::unique_ptr<Background>> workers;
  for (int rank = 0; rank < 2; ++rank) {
    workers.push_back(std::make_unique<Background>(std::string(DTBENCH_BINARY) + " train" + blueprint + ps +
                                                   " --rank " + std::to_string(rank) + " --world 2"));
  }
  for (auto& worker : workers) EXPECT_EQ(worker->finish(), 0) << worker->output();
  for (auto& server : servers) EXPECT_EQ(server->finish(), 0) << server->output();

  const std::vector<float> expected = read_weights(only_child(root_ / "ring") / "weights.bin");
  const fs::path run = only_child(root_ / "ps");
  const std::vector<float> got = read_weights(run / "weights.bin");
  ASSERT_EQ(got.size(), expected.size());
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - expected[i]));
  EXPECT_LT(worst, 1e-4);

  const auto report = read_json(run / "report.json");
  EXPECT_EQ(report["status"], "complete");
  EXPECT_EQ(report["world"], 2);
  EXPECT_EQ(report["workers"]["per_worker"].size(), 2u);
  const auto& comm = report["epochs"][0]["comm_split"];
  EXPECT_GT(comm["push_s"].get<double>(), 0.0);
  EXPECT_GT(comm["pull_s"].get<double>(), 0.0);
  for (const auto& worker : report["workers"]["per_worker"]) EXPECT_GT(worker["push_s"].get<double>(), 0.0);
  // The report splits a parameter server's comm into push, wait and pull, for the run and per worker.
  const Outcome shown = testing::dtbench("report " + run.string());
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  for (const char* row : {"push ms", "wait ms (other workers, the update)", "pull ms"}) {
    EXPECT_NE(shown.output.find(row), std::string::npos) << row << "\n" << shown.output;
  }
  EXPECT_TRUE(std::regex_search(shown.output, std::regex("comm total +push +wait +pull\n"))) << shown.output;
  for (int shard = 0; shard < 2; ++shard) {
    bool found = false;
    for (const auto& entry : fs::recursive_directory_iterator(root_ / "servers")) {
      found |= entry.path().filename() == "server-" + std::to_string(shard) + ".json";
    }
    EXPECT_TRUE(found) << "server-" << shard << ".json";
  }
}

// bench ps spread over processes, as on a cluster's hosts: two `bench ps --first-worker W --world 2`
// against two shards of a model, sync and async. Each process's check round expects the mean of
// both processes' known gradients, so it passes only if the servers took both and each process
// counted the other's (async: after waiting for the servers to hold every worker's rounds); each
// writes its rows, tagged with its place in the world and the servers' mode.
TEST_F(ParameterServerCli, BenchPsAcrossProcessesChecksTheWholeWorld) {
  const fs::path data = synth("idx", 64, 16);
  const std::string blueprint = " --set model=mlp --set dataset.path=" + data.string() +
                                " --set optimizer.lr=1 --set optimizer.momentum=0 --set optimizer.weight_decay=0";
  const std::regex listening("listening on (\\S+)");
  for (const std::string mode : {"sync", "async"}) {
    const fs::path dir = root_ / mode;
    std::vector<std::unique_ptr<Background>> servers;
    std::vector<std::string> addresses;
    for (int shard = 0; shard < 2; ++shard) {
      servers.push_back(std::make_unique<Background>(
          std::string(DTBENCH_BINARY) + " ps --listen 127.0.0.1:0 --shard " + std::to_string(shard) +
          " --shards 2 --workers 2 --mode " + mode + " --no-checkpoint --run-id bench-ps --timeout-s 20 --output " +
          (dir / "servers").string() + blueprint));
      addresses.push_back(servers.back()->wait_for(listening));
      ASSERT_FALSE(addresses.back().empty()) << servers.back()->output();
    }
    std::vector<std::unique_ptr<Background>> benches;
    for (int worker = 0; worker < 2; ++worker) {
      benches.push_back(std::make_unique<Background>(
          std::string(DTBENCH_BINARY) + " bench ps --servers " + addresses[0] + "," + addresses[1] +
          " --first-worker " + std::to_string(worker) + " --world 2 --iters 3 --run-id bench-ps" +
          " --timeout-s 20 --auth-token-file " + (dir / "servers" / "ps.token").string() + " --json " +
          (dir / ("bench-" + std::to_string(worker) + ".json")).string()));
    }
    for (auto& bench : benches) EXPECT_EQ(bench->finish(), 0) << mode << "\n" << bench->output();
    for (auto& server : servers) EXPECT_EQ(server->finish(), 0) << mode << "\n" << server->output();
    for (int worker = 0; worker < 2; ++worker) {
      const auto report = read_json(dir / ("bench-" + std::to_string(worker) + ".json"));
      EXPECT_EQ(report["mode"], mode);
      EXPECT_EQ(report["world"], 2);
      EXPECT_EQ(report["first_worker"], worker);
      EXPECT_EQ(report["shards"], 2);
      ASSERT_EQ(report["rows"].size(), 1u);
      EXPECT_EQ(report["rows"][0]["wrong_elements"], 0) << mode;
      EXPECT_EQ(report["rows"][0]["iterations"], 3);
      EXPECT_GT(report["rows"][0]["server_update_us"].get<double>(), 0.0) << mode << ": the servers' Stats not read";
    }
  }
  // Each process must time the same rounds, so the count is not left to each to choose.
  const Outcome automatic = testing::dtbench("bench ps --servers 127.0.0.1:1 --world 2");
  EXPECT_NE(automatic.exit_code, 0);
  EXPECT_NE(automatic.output.find("--world 2 with 1 worker(s) here needs --iters"), std::string::npos)
      << automatic.output;
  // In-process servers are this process's alone: the other processes could not reach them.
  const Outcome alone = testing::dtbench("bench ps --world 2 --iters 3");
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_NE(alone.output.find("--world 2 with 1 worker(s) here needs --servers"), std::string::npos) << alone.output;
  const Outcome beyond = testing::dtbench("bench ps --servers 127.0.0.1:1 --first-worker 2 --world 2 --iters 3");
  EXPECT_NE(beyond.exit_code, 0);
  EXPECT_NE(beyond.output.find("--first-worker 2 with --workers 1 goes beyond --world 2"), std::string::npos)
      << beyond.output;
}

// What the servers spent updating is their own account (Stats), read around the timed rounds: a
// sync round's wait holds the update, so every worker's mean wait is at least as long.
TEST_F(ParameterServerCli, BenchPsSaysHowLongTheServersUpdateWithinTheWait) {
  const fs::path json = root_ / "bench.json";
  const Outcome bench = testing::dtbench("bench ps --sizes 8MiB --workers 2 --iters 5 --json " + json.string());
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  EXPECT_NE(bench.output.find("update us"), std::string::npos) << bench.output;
  const auto row = read_json(json)["rows"][0];
  const double update = row["server_update_us"].get<double>();
  EXPECT_GT(update, 0.0);
  EXPECT_LE(update, row["wait_us"].get<double>()) << "an update longer than the wait that holds it";
  EXPECT_GE(row["server_straggler_wait_us"].get<double>(), 0.0);
}

// Async bench processes that do not make the same rounds: the one that made more waits for rounds
// that never come, and must end within its --timeout-s with an error that says what to check, not
// hang. (The servers, which that worker never said goodbye to, end after their --idle-timeout-s.)
TEST_F(ParameterServerCli, BenchPsAsyncWorkerWaitingForRoundsThatNeverComeEndsNamingWhy) {
  const fs::path data = synth("idx", 64, 16);
  const std::string blueprint = " --set model=mlp --set dataset.path=" + data.string() +
                                " --set optimizer.lr=1 --set optimizer.momentum=0 --set optimizer.weight_decay=0";
  Background server(std::string(DTBENCH_BINARY) + " ps --listen 127.0.0.1:0 --shard 0 --shards 1 --workers 2" +
                    " --mode async --no-checkpoint --run-id bench-ps --idle-timeout-s 3 --output " +
                    (root_ / "servers").string() + blueprint);
  const std::string address = server.wait_for(std::regex("listening on (\\S+)"));
  ASSERT_FALSE(address.empty()) << server.output();
  const std::string common = " bench ps --servers " + address + " --world 2 --warmup 1 --run-id bench-ps" +
                             " --timeout-s 2 --auth-token-file " + (root_ / "servers" / "ps.token").string();
  const auto started = std::chrono::steady_clock::now();
  Background more(std::string(DTBENCH_BINARY) + common + " --first-worker 0 --iters 6");
  Background fewer(std::string(DTBENCH_BINARY) + common + " --first-worker 1 --iters 2");
  EXPECT_NE(more.finish(), 0) << more.output();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_NE(more.output().find("did every bench process make the same rounds?"), std::string::npos) << more.output();
  EXPECT_LT(seconds, 15.0);
  fewer.finish();
  server.finish();
}

// Three ps-async workers, rank 1 sleeping 20 ms in every step: the fast ones finish long before
// it. The run's throughput is all images over the span from the first worker's start to the last
// worker's last step, recomputed here from the workers' own files; the tolerance is the JSON
// round trip of doubles (1e-9 relative). The span itself is bounded independently: at least the
// straggler's 30 sleeps, at most the wall time this test measured around the workers.
TEST_F(ParameterServerCli, AsyncThroughputWithAStragglerIsTotalImagesOverTheSpan) {
  constexpr int kWorkers = 3, kSteps = 30, kBatch = 16;
  constexpr double kDelaySeconds = 0.020;
  const fs::path data = synth("idx", 1600, 64);
  const std::string blueprint = " --set model=mlp --set dataset.path=" + data.string() + " --set steps=" +
                                std::to_string(kSteps) + " --set epochs=1 --set batch=" + std::to_string(kBatch) +
                                " --set threads=1 --set straggler.rank=1 --set straggler.delay_ms=20";
  const std::string ps = start_async_shard(kWorkers, blueprint);
  ASSERT_FALSE(ps.empty()) << server_->output();
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Background>> workers;
  for (int rank = 0; rank < kWorkers; ++rank) {
    workers.push_back(std::make_unique<Background>(std::string(DTBENCH_BINARY) + " train" + blueprint + ps +
                                                   " --rank " + std::to_string(rank) + " --world 3"));
  }
  for (auto& worker : workers) ASSERT_EQ(worker->finish(), 0) << worker->output();
  const double outside_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(server_->finish(), 0) << server_->output();

  const fs::path run = only_child(root_ / "ps");
  double first_start = 1e300, last_step = -1e300, last_end = -1e300, rates = 0.0;
  int64_t images = 0;
  for (int rank = 0; rank < kWorkers; ++rank) {
    const auto worker = read_json(run / ("worker-" + std::to_string(rank) + ".json"));
    const auto& epoch = worker["epochs"].at(0);
    first_start = std::min(first_start, epoch["start_unix_s"].get<double>());
    last_step = std::max(last_step, epoch["steps_end_unix_s"].get<double>());
    last_end = std::max(last_end, epoch["end_unix_s"].get<double>());
    images += epoch["images"].get<int64_t>();
    rates += epoch["images_per_second"].get<double>();  // the old figure: a sum of per-worker rates
  }
  EXPECT_EQ(images, kWorkers * kSteps * kBatch);
  const auto report = read_json(run / "report.json");
  const auto& figures = report["run"];
  EXPECT_EQ(figures["images"].get<int64_t>(), images);
  EXPECT_NEAR(figures["seconds"].get<double>(), last_end - first_start, 1e-9 * last_end);
  const double throughput = static_cast<double>(images) / (last_step - first_start);
  EXPECT_NEAR(figures["images_per_second"].get<double>(), throughput, 1e-9 * throughput);
  EXPECT_GE(last_step - first_start, kSteps * kDelaySeconds);
  EXPECT_LE(figures["seconds"].get<double>(), outside_seconds);
  EXPECT_LT(figures["images_per_second"].get<double>(), rates) << "the run is not faster than its workers' sum";
  // `dtbench report` applies the same rule to the same files.
  const Outcome shown = testing::dtbench("report " + run.string());
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find(fmt::format("{:.0f}", throughput)), std::string::npos) << shown.output;
}

// Two ps-async workers, worker 1 started 0.6 s after worker 0 (as a slow host's set-up would make
// it): every worker starts its first epoch together, so the run's throughput (all images over the
// first worker's start to the last worker's last step) is what the workers trained at — all images
// over the longest any worker trained, from its own start to its own last step — within 5 %.
// (Asynchronous workers may train at different speeds on shared cores, so the slowest sets both.)
// Without the start together, worker 0 trained alone for 0.6 s and the run was credited a quarter
// of that.
TEST_F(ParameterServerCli, AsyncWorkersStartTogetherSoTheRunsRateIsTheWorkersOwn) {
  constexpr int kWorkers = 2, kSteps = 150, kBatch = 16;
  const fs::path data = synth("idx", 4800, 64);
  const std::string blueprint = " --set model=mlp --set dataset.path=" + data.string() + " --set steps=" +
                                std::to_string(kSteps) + " --set epochs=1 --set batch=" + std::to_string(kBatch) +
                                " --set threads=1";
  const std::string ps = start_async_shard(kWorkers, blueprint);
  ASSERT_FALSE(ps.empty()) << server_->output();
  std::vector<std::unique_ptr<Background>> workers;
  for (int rank = 0; rank < kWorkers; ++rank) {
    const std::string late = rank == 1 ? "sleep 0.6 && exec " : "exec ";
    workers.push_back(std::make_unique<Background>(late + std::string(DTBENCH_BINARY) + " train" + blueprint + ps +
                                                   " --rank " + std::to_string(rank) + " --world 2"));
  }
  for (auto& worker : workers) ASSERT_EQ(worker->finish(), 0) << worker->output();
  EXPECT_EQ(server_->finish(), 0) << server_->output();

  const fs::path run = only_child(root_ / "ps");
  double longest = 0.0, first_start = 1e300, last_start = -1e300;
  int64_t images = 0;
  for (int rank = 0; rank < kWorkers; ++rank) {
    const auto worker = read_json(run / ("worker-" + std::to_string(rank) + ".json"));
    const auto& epoch = worker["epochs"].at(0);
    const double start = epoch["start_unix_s"].get<double>();
    longest = std::max(longest, epoch["steps_end_unix_s"].get<double>() - start);
    first_start = std::min(first_start, start);
    last_start = std::max(last_start, start);
    images += epoch["images"].get<int64_t>();
  }
  EXPECT_EQ(images, kWorkers * kSteps * kBatch);
  EXPECT_LT(last_start - first_start, 0.01) << "the workers did not start their epoch together";
  const double own = static_cast<double>(images) / longest;
  const double run_rate = read_json(run / "report.json")["run"]["images_per_second"].get<double>();
  EXPECT_NEAR(run_rate / own, 1.0, 0.05) << "run " << run_rate << " images/s, the workers' own " << own;
}

}  // namespace
}  // namespace dtbench
