// Parameter servers end to end, as a user runs them: two `dtbench ps` shards and two
// `dtbench train --rank R --world 2` workers as separate processes on loopback. ps-sync ends with
// the weights the ring gives for the same blueprint, and both sides leave their reports.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

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

class ParameterServerCli : public testing::MpirunTest {};

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

}  // namespace
}  // namespace dtbench
