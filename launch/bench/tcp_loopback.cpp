#include "launch/bench/tcp_loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/util/error.h"
#include "launch/bench/timed_rounds.h"

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

// One connection: a client socket and an echo thread at the other end that reads a whole round,
// then sends it back, until the client closes.
class EchoLine {
 public:
  explicit EchoLine(int64_t bytes)
      : bytes_(bytes), listener_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)),
        client_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)), out_(static_cast<size_t>(bytes), 'x'),
        back_(static_cast<size_t>(bytes)) {
    const uint16_t port = listen_on_loopback(listener_);
    echo_ = std::thread([this] { echo(); });
    try {
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(port);
      check(connect(client_.fd(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0, "connect");
      no_delay(client_.fd());
    } catch (...) {
      stop();
      throw;
    }
  }
  ~EchoLine() { stop(); }
  EchoLine(const EchoLine&) = delete;
  EchoLine& operator=(const EchoLine&) = delete;

  // One round, `bytes` out and back; its seconds.
  double round() {
    const auto start = Clock::now();
    check(send_all(client_.fd(), out_.data(), bytes_) && receive_all(client_.fd(), back_.data(), bytes_),
          "echo round");
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

 private:
  void echo() {
    const int peer = accept(listener_.fd(), nullptr, nullptr);
    if (peer < 0) return;
    const Socket connection(peer);
    no_delay(peer);
    std::vector<char> buffer(static_cast<size_t>(bytes_));
    while (receive_all(peer, buffer.data(), bytes_) && send_all(peer, buffer.data(), bytes_)) {
    }
  }
  // The echo thread sees the end of the stream (or its accept fails) and ends.
  void stop() {
    client_.shut();
    listener_.shut();
    if (echo_.joinable()) echo_.join();
  }

  int64_t bytes_;
  Socket listener_;
  Socket client_;
  std::vector<char> out_, back_;
  std::thread echo_;
};

// `rounds` rounds on every line at once, each round begun together on all of them (a thread per
// line beyond one); a round's time is its slowest line's.
std::vector<double> rounds_on(std::vector<std::unique_ptr<EchoLine>>& lines, int rounds) {
  std::vector<double> times(static_cast<size_t>(rounds), 0.0);
  if (lines.size() == 1) {
    for (double& time : times) time = lines[0]->round();
    return times;
  }
  std::barrier begin(static_cast<std::ptrdiff_t>(lines.size()));
  std::mutex mutex;
  std::exception_ptr first;
  std::atomic<bool> failed = false;
  std::vector<std::thread> threads;
  for (auto& line : lines) {
    threads.emplace_back([&, line = line.get()] {
      for (size_t k = 0; k < times.size(); ++k) {
        begin.arrive_and_wait();  // every thread arrives each round, so none waits for a failed one
        if (failed) continue;
        try {
          const double seconds = line->round();
          std::lock_guard lock(mutex);
          times[k] = std::max(times[k], seconds);
        } catch (...) {
          std::lock_guard lock(mutex);
          if (!first) first = std::current_exception();
          failed = true;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  if (first) std::rethrow_exception(first);
  return times;
}

}  // namespace

TcpRoundResult measure_tcp_rounds(int64_t bytes, double target_ms, int warmup, int connections) {
  if (bytes < 1) throw InputError(fmt::format("TCP probe: {} bytes per round; expected at least 1", bytes));
  if (connections < 1) throw InputError(fmt::format("TCP probe: {} connections; expected at least 1", connections));
  std::vector<std::unique_ptr<EchoLine>> lines;
  for (int c = 0; c < connections; ++c) lines.push_back(std::make_unique<EchoLine>(bytes));
  const double estimate = rounds_on(lines, std::max(warmup, 1)).back();
  const int iterations = timed_rounds(target_ms, estimate);
  const std::vector<double> rounds = rounds_on(lines, iterations);
  TcpRoundResult result{.bytes = bytes, .connections = connections, .iterations = iterations};
  for (double seconds : rounds) result.mean_seconds += seconds / static_cast<double>(rounds.size());
  result.min_seconds = *std::min_element(rounds.begin(), rounds.end());
  result.gbps = 2.0 * static_cast<double>(bytes) / result.mean_seconds / 1e9;
  return result;
}

}  // namespace dtbench
