// The parameter servers' part of a report from hand-written server-<shard>.json files: found
// beside report.json and in servers/, ordered by shard, queue and apply times per shard, the
// staleness mean and max computed from the histogram, and one histogram over all shards.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "launch/report/server_stats.h"

namespace dtbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json server(int shard, const std::string& mode, const json& histogram) {
  return {{"shard", shard}, {"mode", mode},
          {"updates", {{"updates_applied", 12},
                       {"queueing", {{"mean_seconds", 0.002}, {"max_seconds", 0.010}}},
                       {"apply", {{"mean_seconds", 0.0005}, {"max_seconds", 0.001}}},
                       {"straggler_wait", {{"mean_seconds", 0.0}}},
                       {"staleness", {{"histogram", histogram}}}}}};
}

class ServerStats : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtbench-server-stats-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "servers");
    run_.name = "run";
    run_.transport = "ps-async";
    run_.path = dir_ / "report.json";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  RunRecord run_;
};

TEST_F(ServerStats, ReadsEveryShardAndComputesStaleness) {
  std::ofstream(dir_ / "servers" / "server-1.json") << server(1, "async", {{"0", 6}, {"2", 2}}).dump();
  std::ofstream(dir_ / "server-0.json") << server(0, "async", {{"0", 3}, {"1", 1}}).dump();
  std::ofstream(dir_ / "servers" / "trace-server-0.json") << "[";  // not statistics: left alone
  const auto servers = load_servers(run_);
  ASSERT_EQ(servers.size(), 2u);
  EXPECT_EQ(servers[0].shard, 0);
  EXPECT_DOUBLE_EQ(servers[1].queue_max_s, 0.010);
  const ReportTable table = servers_table("run", servers);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0][3], "2.000");             // queue ms mean
  EXPECT_EQ(table.rows[0][5], "0.500");             // apply ms mean
  EXPECT_EQ(table.rows[0][8], "0.25");              // (0x3 + 1x1) / 4
  EXPECT_EQ(table.rows[1][8], "0.50");              // (0x6 + 2x2) / 8
  EXPECT_EQ(table.rows[1][9], "2");
  const std::string chart = staleness_chart("run", servers);
  EXPECT_NE(chart.find(">0 behind<"), std::string::npos);
  EXPECT_NE(chart.find(">2 behind<"), std::string::npos);
  EXPECT_NE(chart.find("0 behind: 9 gradients"), std::string::npos);  // 3 + 6 at staleness 0
}

TEST_F(ServerStats, SyncServersHaveNoStalenessAndNoFilesNothing) {
  EXPECT_TRUE(load_servers(run_).empty());
  std::ofstream(dir_ / "server-0.json") << server(0, "sync", json::object()).dump();
  const auto servers = load_servers(run_);
  ASSERT_EQ(servers.size(), 1u);
  EXPECT_EQ(servers_table("run", servers).rows[0][8], "-");
  EXPECT_EQ(staleness_chart("run", servers), "");
}

TEST_F(ServerStats, ABrokenFileIsNamed) {
  std::ofstream(dir_ / "server-0.json") << "{not json";
  try {
    load_servers(run_);
    FAIL() << "no error";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("server-0.json"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace dtbench
