// Workers that share a process (bench ps's worker threads, these tests) must each reach a server
// over a TCP connection of their own, as workers in processes of their own do: gRPC would otherwise
// carry every channel to one address over one shared connection, read by one server thread at a
// time, and `bench ps` would time that bottleneck instead of the servers'.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "ps_fixture.h"

namespace dtbench::pstest {
namespace {

// The inodes of this process's sockets (its /proc/self/fd links read "socket:[INODE]").
std::set<std::string> own_socket_inodes() {
  std::set<std::string> inodes;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::string target = std::filesystem::read_symlink(fd.path(), error).string();
    if (!error && target.rfind("socket:[", 0) == 0) inodes.insert(target.substr(8, target.size() - 9));
  }
  return inodes;
}

// Established TCP connections of this process whose remote end is `port`: the client ends of its
// connections to a server listening there. Other processes' (the suite runs tests side by side,
// and a server elsewhere may listen on the same port of another address) are not counted.
int connections_to_port(int port) {
  const std::set<std::string> own = own_socket_inodes();
  int count = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      const auto colon = remote.rfind(':');
      if (state == "01" && colon != std::string::npos && std::stoi(remote.substr(colon + 1), nullptr, 16) == port &&
          own.count(inode) > 0) {
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
