#pragma once
// A TCP stream between two hosts of a cluster, measured by the test itself: sockets are made
// inside a host's network namespace by a thread that enters it (setns), then used from here.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace dtbench::testing {

inline int socket_in_namespace(const std::string& ns) {
  int fd = -1;
  std::thread([&] {
    const int nsfd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) == 0) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (nsfd >= 0) close(nsfd);
  }).join();
  return fd;
}

struct StreamResult {
  bool connected = false;
  double bytes = 0;
  double seconds = 0;
  double gbit_per_s() const { return seconds > 0 ? bytes * 8 / seconds / 1e9 : 0; }
};

// Streams for `seconds` from a socket in `from_ns` to one listening in `to_ns` on `to_address`;
// the rate is what the receiver got, first byte to end of stream. Gives up after 10 s.
inline StreamResult tcp_stream(const std::string& from_ns, const std::string& to_ns, const std::string& to_address,
                               double seconds) {
  StreamResult result;
  const int listener = socket_in_namespace(to_ns), sender = socket_in_namespace(from_ns);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, to_address.c_str(), &address.sin_addr);
  socklen_t length = sizeof(address);
  const timeval limit{10, 0};
  if (listener < 0 || sender < 0 || bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(listener, 1) != 0 || getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (listener >= 0) close(listener);
    if (sender >= 0) close(sender);
    return result;
  }
  setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  setsockopt(sender, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
  std::thread receiver([&] {
    const int peer = accept(listener, nullptr, nullptr);
    if (peer < 0) return;
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    std::vector<char> buffer(1 << 20);
    std::chrono::steady_clock::time_point first;
    for (ssize_t n; (n = recv(peer, buffer.data(), buffer.size(), 0)) > 0;) {
      if (result.bytes == 0) first = std::chrono::steady_clock::now();
      result.bytes += static_cast<double>(n);
    }
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count();
    close(peer);
  });
  result.connected = connect(sender, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  if (result.connected) {
    const std::vector<char> data(1 << 20, 'x');
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end && send(sender, data.data(), data.size(), MSG_NOSIGNAL) > 0) {
    }
  }
  close(sender);  // the receiver sees the end of the stream
  if (!result.connected) shutdown(listener, SHUT_RDWR);
  receiver.join();
  close(listener);
  return result;
}

}  // namespace dtbench::testing
