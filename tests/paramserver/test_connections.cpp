// Workers that share a process (bench ps's worker threads, these tests) must each reach a server
// over a TCP connection of their own, as workers in processes of their own do: gRPC would otherwise
// carry every channel to one address over one shared connection, read by one server thread at a
// time, and `bench ps` would time that bottleneck instead of the servers'.
#include <fstream>
#include <sstream>
#include <string>

#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

// Established TCP connections of this machine's loopback whose remote end is `port`: the client
// ends of connections to a server listening there.
int connections_to_port(int port) {
  int count = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      const auto colon = remote.rfind(':');
      if (state == "01" && colon != std::string::npos && std::stoi(remote.substr(colon + 1), nullptr, 16) == port) {
        ++count;
      }
    }
  }
  return count;
}

int port_of(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

TEST(PsConnections, TwoWorkersInOneProcessEachHaveAConnectionOfTheirOwn) {
  OnePayloadServer server(1024);
  const int port = port_of(server.server->address());
  ASSERT_EQ(connections_to_port(port), 0);
  PsConnection first(server.connection());
  PsConnection second(server.connection());
  first.stats();  // a call connects the channel
  second.stats();
  EXPECT_EQ(connections_to_port(port), 2) << "two workers of one process pushing through one shared connection";
}

}  // namespace
}  // namespace dtbench::pstest
