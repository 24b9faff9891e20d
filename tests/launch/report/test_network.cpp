// Where ranks ran and which path each pair's traffic took, from the workers' reports.
#include <gtest/gtest.h>

#include "launch/report/network.h"

namespace dtbench {
namespace {

nlohmann::json worker(int rank, const std::string& host, double eth0_sent) {
  nlohmann::json report = {{"rank", rank}, {"provenance", {{"hostname", host}}}};
  report["network"]["interfaces"] = {{"lo", {{"sent_bytes", 5}, {"received_bytes", 5}}},
                                     {"eth0", {{"sent_bytes", eth0_sent}, {"received_bytes", eth0_sent}}}};
  report["network"]["cluster"] = {{"name", "c1"},    {"host", rank < 2 ? 0 : 1}, {"host_name", host},
                                  {"hosts", 2},      {"slots", 2},               {"link", "1gbit"},
                                  {"shaping", "tc htb, 1gbit each way"}};
  return report;
}

TEST(Network, PairsOnOneHostUseSharedMemoryAndAcrossHostsTcp) {
  const auto network = network_json({worker(0, "c1-h0", 1e6), worker(1, "c1-h0", 0), worker(2, "c1-h1", 2e6)}, "ring");
  EXPECT_EQ(network["hosts"], 2);
  ASSERT_EQ(network["pairs"].size(), 3u);
  EXPECT_EQ(network["pairs"][0]["path"], "shared memory");  // 0-1
  EXPECT_EQ(network["pairs"][1]["path"], "TCP");            // 0-2
  EXPECT_EQ(network["pairs"][2]["path"], "TCP");            // 1-2
  EXPECT_EQ(network["pair_paths"]["TCP"], 2);
  // The cluster once, without any one rank's host; loopback left out of the link traffic.
  EXPECT_EQ(network["cluster"]["link"], "1gbit");
  EXPECT_FALSE(network["cluster"].contains("host_name"));
  EXPECT_FALSE(network["ranks"][0]["interfaces"].contains("lo"));
  EXPECT_EQ(network["ranks"][2]["interfaces"]["eth0"]["sent_bytes"], 2e6);

  const std::string text = network_text(network);
  EXPECT_NE(text.find("emulated cluster c1 (2 hosts x 2 slots, link 1gbit"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 2 on c1-h1: eth0 sent 2.0 MB"), std::string::npos) << text;
  EXPECT_NE(text.find("0-1 shared memory, 0-2 TCP, 1-2 TCP"), std::string::npos) << text;
}

TEST(Network, ParameterServerWorkersHaveNoPairs) {
  const auto network = network_json({worker(0, "a", 0), worker(1, "b", 0)}, "ps-sync");
  EXPECT_FALSE(network.contains("pairs"));
  EXPECT_EQ(network["hosts"], 2);
}

TEST(Network, RanksYieldOnlyWhenEveryRankDoes) {
  auto a = worker(0, "c1-h0", 0), b = worker(1, "c1-h1", 0);
  EXPECT_FALSE(network_json({a, b}, "ring").contains("mpi_yield_when_idle"));  // not said: not MPI
  a["network"]["mpi_yield_when_idle"] = true;
  b["network"]["mpi_yield_when_idle"] = true;
  const auto yielding = network_json({a, b}, "ring");
  EXPECT_EQ(yielding["mpi_yield_when_idle"], true);
  EXPECT_NE(network_text(yielding).find("MPI ranks yield their core while they wait"), std::string::npos);
  b["network"]["mpi_yield_when_idle"] = false;
  const auto polling = network_json({a, b}, "ring");
  EXPECT_EQ(polling["mpi_yield_when_idle"], false);
  EXPECT_NE(network_text(polling).find("MPI ranks poll while they wait"), std::string::npos);
}

}  // namespace
}  // namespace dtbench
