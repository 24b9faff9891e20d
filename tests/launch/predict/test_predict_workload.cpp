// What the model reads from a run's parameter servers: per-byte summing and update time over all
// shards, the largest shard's share; nothing when there are no server files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/util/error.h"
#include "launch/predict/workload.h"

namespace dtbench {
namespace {

class ServerCostsTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir_ / "servers"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void server(int shard, double floats, double aggregation_s, double apply_s, int gradients, int updates) {
    const nlohmann::json updates_json = {{"aggregation", {{"total_seconds", aggregation_s}}},
                                         {"apply", {{"total_seconds", apply_s}}},
                                         {"gradients_accepted", gradients},
                                         {"updates_applied", updates}};
    std::ofstream(dir_ / "servers" / ("server-" + std::to_string(shard) + ".json"))
        << nlohmann::json{{"float_count", floats}, {"updates", updates_json}};
  }

  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("predict-servers-" + std::to_string(getpid()));
};

TEST_F(ServerCostsTest, PerByteCostsOverAllShards) {
  // 3 M and 1 M floats (12 MB, 4 MB), 10 updates of 2 gradients each.
  server(0, 3e6, 0.24, 0.6, 20, 10);
  server(1, 1e6, 0.08, 0.2, 20, 10);
  const auto costs = load_server_costs(dir_);
  ASSERT_TRUE(costs.has_value());
  EXPECT_EQ(costs->shards, 2);
  EXPECT_DOUBLE_EQ(costs->largest_share, 0.75);
  EXPECT_NEAR(costs->reduce_s_per_byte, 0.32 / (16e6 * 20), 1e-18);  // both shards' bytes, 20 gradients each
  EXPECT_NEAR(costs->apply_s_per_byte, 0.8 / (16e6 * 10), 1e-18);
}

TEST_F(ServerCostsTest, NoServerFilesNoCosts) { EXPECT_FALSE(load_server_costs(dir_).has_value()); }

TEST_F(ServerCostsTest, BrokenServerFileIsNamed) {
  std::ofstream(dir_ / "servers" / "server-0.json") << R"({"float_count": 5})";
  try {
    load_server_costs(dir_);
    FAIL() << "a server file without updates was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("server-0.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dtbench
