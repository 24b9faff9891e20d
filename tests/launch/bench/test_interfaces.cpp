// doctor --iface: an interface (or subnet) a host lacks is a problem named with what it has.
#include <gtest/gtest.h>

#include "launch/bench/interfaces.h"

namespace dtbench {
namespace {

const std::vector<HostInterface> kHost = {{"lo", {0x7f000001u}}, {"eth0", {0xc6120001u}}};  // 127.0.0.1, 198.18.0.1

TEST(DoctorInterfaces, NamesAndSubnetsThatExistAreFine) {
  EXPECT_EQ(interface_problem("eth0", kHost), "");
  EXPECT_EQ(interface_problem("lo,eth0", kHost), "");
  EXPECT_EQ(interface_problem("198.18.0.0/24", kHost), "");
  EXPECT_EQ(interface_problem("198.18.0.0/15", kHost), "");
}

TEST(DoctorInterfaces, AMissingNameOrSubnetIsNamedWithTheInterfacesThereAre) {
  EXPECT_EQ(interface_problem("nosuch0", kHost), "--iface: no interface nosuch0 on this host (it has: lo, eth0)");
  EXPECT_NE(interface_problem("eth0,ib0", kHost).find("no interface ib0 "), std::string::npos);
  EXPECT_NE(interface_problem("10.0.0.0/8", kHost), "");
  EXPECT_NE(interface_problem("198.18.0.0/99", kHost), "");  // malformed: matches nothing
}

TEST(DoctorInterfaces, ThisHostHasLoopback) {
  const auto interfaces = host_interfaces();
  EXPECT_EQ(interface_problem("lo", interfaces), "");
  EXPECT_EQ(interface_problem("127.0.0.0/8", interfaces), "");
}

}  // namespace
}  // namespace dtbench
