// /proc/net/dev read into per-interface byte counts, and the traffic since a start: the counts a
// report uses to show which path a run's bytes took.
#include <gtest/gtest.h>

#include "launch/monitor/interface_traffic.h"

namespace dtbench {
namespace {

constexpr const char* kNetDev =
    "Inter-|   Receive                                                |  Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
    "    lo:  123456     100    0    0    0     0          0         0   123456     100    0    0    0     0       0          0\n"
    "  eth0: 9876543210 7000  0    0    0     0          0         5 1234567890  6000    0    0    0     0       0          0\n";

TEST(InterfaceTraffic, ReadsReceivedAndSentBytesPerInterface) {
  const auto interfaces = parse_net_dev(kNetDev);
  ASSERT_EQ(interfaces.size(), 2u);
  EXPECT_EQ(interfaces.at("lo").received, 123456u);
  EXPECT_EQ(interfaces.at("eth0").received, 9876543210u);
  EXPECT_EQ(interfaces.at("eth0").sent, 1234567890u);
}

TEST(InterfaceTraffic, TextItCannotReadGivesNothing) {
  EXPECT_TRUE(parse_net_dev("").empty());
  EXPECT_TRUE(parse_net_dev("eth0: 1 2 3\n").empty());  // too few fields
}

TEST(InterfaceTraffic, CountsWhatLoopbackCarriedSinceTheStart) {
  const InterfaceTraffic traffic;
  const auto before = traffic.since_start();
  ASSERT_TRUE(before.contains("lo")) << before.dump();
  // Loopback traffic of this process's namespace: a UDP datagram to ourselves would do, but any
  // counter only grows, so the second reading is at least the first.
  const auto after = traffic.since_start();
  EXPECT_GE(after["lo"]["sent_bytes"].get<uint64_t>(), before["lo"]["sent_bytes"].get<uint64_t>());
}

}  // namespace
}  // namespace dtbench
