// What the model reads from a run's parameter servers: per-byte summing and update time over all
// shards, the largest shard's share; nothing when there are no server files. And where in
// backward each gradient bucket is complete, by the layers' multiply-adds.
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

// LeNet-5 on (3, 32, 32), by hand from its layers (core/models/classic.cpp): parameters 456, 2,416,
// 48,120, 10,164, 850; multiply-adds 352,800, 240,000, 48,000, 10,080, 840. Buckets of 100 KB
// (25,600 floats) from the back: the three fc layers (59,134 floats) close the first, the two
// convolutions are the second. The fc layers hold 95 % of the bytes but 9 % of the work.
TEST(GradientBuckets, ReadyWhenTheLayersBehindThemAreDone) {
  const GradientBuckets b = gradient_buckets("lenet5", {3, 32, 32}, 10, 100 << 10);
  ASSERT_EQ(b.bytes.size(), 2u);
  ASSERT_EQ(b.ready.size(), 2u);
  EXPECT_GE(b.bytes[0], 59'134 * 4);
  EXPECT_NEAR(b.ready[0], (48'000 + 10'080 + 840) / 651'720.0, 1e-12);
  EXPECT_DOUBLE_EQ(b.ready[1], 1.0);
}

TEST(GradientBuckets, ReadyGrowsAlongBackwardAndOneBucketIsReadyAtItsEnd) {
  const GradientBuckets fused = gradient_buckets("resnet18", {3, 32, 32}, 10, 0);
  ASSERT_EQ(fused.ready.size(), 1u);
  EXPECT_DOUBLE_EQ(fused.ready[0], 1.0);
  const GradientBuckets b = gradient_buckets("resnet18", {3, 32, 32}, 10, 1 << 20);
  ASSERT_EQ(b.ready.size(), b.bytes.size());
  ASSERT_GT(b.ready.size(), 5u);
  for (size_t k = 1; k < b.ready.size(); ++k) EXPECT_LE(b.ready[k - 1], b.ready[k]) << "bucket " << k;
  EXPECT_GT(b.ready.front(), 0.0);
  EXPECT_DOUBLE_EQ(b.ready.back(), 1.0);
}

}  // namespace
}  // namespace dtbench
