#include "launch/bench/tcp_loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

// Closes its descriptor on every path out.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {
    if (fd_ < 0) throw IoError(fmt::format("TCP probe: socket: {}", std::strerror(errno)));
  }
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }
  void shut() const { shutdown(fd_, SHUT_RDWR); }

 private:
  int fd_;
};

void check(bool ok, const char* what) {
  if (!ok) throw IoError(fmt::format("TCP probe: {}: {}", what, std::strerror(errno)));
}

void no_delay(int fd) {
  const int one = 1;
  check(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0, "setsockopt(TCP_NODELAY)");
}

// false when the peer closed the connection.
bool send_all(int fd, const char* data, int64_t bytes) {
  while (bytes > 0) {
    const ssize_t n = send(fd, data, static_cast<size_t>(bytes), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    bytes -= n;
  }
  return true;
}

bool receive_all(int fd, char* data, int64_t bytes) {
  while (bytes > 0) {
    const ssize_t n = recv(fd, data, static_cast<size_t>(bytes), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    bytes -= n;
  }
  return true;
}

// A listener on 127.0.0.1 at a free port; returns the port.
uint16_t listen_on_loopback(const Socket& listener) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  check(bind(listener.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0, "bind 127.0.0.1:0");
  check(listen(listener.fd(), 1) == 0, "listen");
  check(getsockname(listener.fd(), reinterpret_cast<sockaddr*>(&address), &length) == 0, "getsockname");
  return ntohs(address.sin_port);
}

}  // namespace

TcpRoundResult measure_tcp_rounds(int64_t bytes, double target_ms, int warmup) {
  if (bytes < 1) throw InputError(fmt::format("TCP probe: {} bytes per round; expected at least 1", bytes));
  const Socket listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const uint16_t port = listen_on_loopback(listener);
  // The echo side: reads a whole round, then sends it back, until the client closes.
  std::thread echo([&listener, bytes] {
    const int peer = accept(listener.fd(), nullptr, nullptr);
    if (peer < 0) return;
    const Socket connection(peer);
    no_delay(peer);
    std::vector<char> buffer(static_cast<size_t>(bytes));
    while (receive_all(peer, buffer.data(), bytes) && send_all(peer, buffer.data(), bytes)) {
    }
  });
  const Socket client(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  std::vector<char> out(static_cast<size_t>(bytes), 'x'), back(static_cast<size_t>(bytes));
  std::vector<double> rounds;
  try {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    check(connect(client.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0, "connect");
    no_delay(client.fd());
    const auto round = [&] {
      const auto start = Clock::now();
      check(send_all(client.fd(), out.data(), bytes) && receive_all(client.fd(), back.data(), bytes), "echo round");
      return std::chrono::duration<double>(Clock::now() - start).count();
    };
    double estimate = 0;
    for (int k = 0; k < std::max(warmup, 1); ++k) estimate = round();
    const int iterations = static_cast<int>(std::clamp(std::ceil(target_ms / 1e3 / std::max(estimate, 1e-9)), 3.0, 1000.0));
    for (int k = 0; k < iterations; ++k) rounds.push_back(round());
  } catch (...) {
    client.shut();
    listener.shut();
    echo.join();
    throw;
  }
  client.shut();  // the echo thread sees the end of the stream
  echo.join();
  TcpRoundResult result{.bytes = bytes, .iterations = static_cast<int>(rounds.size())};
  for (double seconds : rounds) result.mean_seconds += seconds / static_cast<double>(rounds.size());
  result.min_seconds = *std::min_element(rounds.begin(), rounds.end());
  result.gbps = 2.0 * static_cast<double>(bytes) / result.mean_seconds / 1e9;
  return result;
}

}  // namespace dtbench
