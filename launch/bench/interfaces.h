#pragma once
// Whether the interfaces a user names for MPI's TCP traffic exist on this host. Open MPI only
// warns about an unknown btl_tcp_if_include entry and then uses every interface it finds, so
// without this check `doctor --iface typo0` would PASS on a host where the interface is missing.
#include <string>
#include <vector>

namespace dtbench {

// This host's interfaces: names and IPv4 addresses.
struct HostInterface {
  std::string name;
  std::vector<unsigned> ipv4;  // host byte order
};
std::vector<HostInterface> host_interfaces();

// What is wrong with `spec` (btl_tcp_if_include syntax: comma-separated names or a.b.c.d/len
// subnets) on a host with `interfaces`: "" when every entry names an interface or a subnet one
// of them has an address in; otherwise a message naming the entries and the interfaces there are.
std::string interface_problem(const std::string& spec, const std::vector<HostInterface>& interfaces);

}  // namespace dtbench
