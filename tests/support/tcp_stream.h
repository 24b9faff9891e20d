#pragma once
// A TCP stream between two hosts of a cluster, measured by the test itself: sockets are made
// inside a host's network namespace by a thread that enters it (setns), then used from here.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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

// Every send, receive and accept of these measurements gives up after this.
constexpr timeval kSocketLimit{10, 0};

// A socket listening in `to_ns` on `to_address` (a port of the kernel's choice, in `address`) and
// an unconnected one in `from_ns` to reach it with; both -1 where either could not be made.
struct Endpoints {
  int listener = -1, sender = -1;
  sockaddr_in address{};
  bool open() const { return listener >= 0 && sender >= 0; }
};

inline Endpoints open_endpoints(const std::string& from_ns, const std::string& to_ns, const std::string& to_address) {
  Endpoints ends{.listener = socket_in_namespace(to_ns), .sender = socket_in_namespace(from_ns)};
  ends.address.sin_family = AF_INET;
  inet_pton(AF_INET, to_address.c_str(), &ends.address.sin_addr);
  socklen_t length = sizeof(ends.address);
  auto* address = reinterpret_cast<sockaddr*>(&ends.address);
  if (!ends.open() || bind(ends.listener, address, sizeof(ends.address)) != 0 || listen(ends.listener, 1) != 0 ||
      getsockname(ends.listener, address, &length) != 0) {
    if (ends.listener >= 0) close(ends.listener);
    if (ends.sender >= 0) close(ends.sender);
    return {};
  }
  setsockopt(ends.listener, SOL_SOCKET, SO_RCVTIMEO, &kSocketLimit, sizeof(kSocketLimit));
  setsockopt(ends.sender, SOL_SOCKET, SO_SNDTIMEO, &kSocketLimit, sizeof(kSocketLimit));
  setsockopt(ends.sender, SOL_SOCKET, SO_RCVTIMEO, &kSocketLimit, sizeof(kSocketLimit));
  return ends;
}

struct StreamResult {
  bool connected = false;
  double bytes = 0;
  double seconds = 0;
  // Bytes received in each kStreamWindow from the first byte on: the stream's rate moment by moment.
  std::vector<double> window_bytes;
  double gbit_per_s() const { return seconds > 0 ? bytes * 8 / seconds / 1e9 : 0; }
  // The median rate of the whole windows after the first (TCP's slow start): what the stream holds
  // in steady state, which a moment lost to another process on a 2-core machine does not change.
  double steady_gbit_per_s() const;
};

constexpr double kStreamWindow = 0.1;

inline double StreamResult::steady_gbit_per_s() const {
  if (window_bytes.size() < 3) return 0;
  std::vector<double> steady(window_bytes.begin() + 1, window_bytes.end() - 1);  // the last is partial
  std::nth_element(steady.begin(), steady.begin() + steady.size() / 2, steady.end());
  return steady[steady.size() / 2] * 8 / kStreamWindow / 1e9;
}

// Streams for `seconds` from a socket in `from_ns` to one listening in `to_ns` on `to_address`;
// the rate is what the receiver got, first byte to end of stream. Gives up after 10 s.
inline StreamResult tcp_stream(const std::string& from_ns, const std::string& to_ns, const std::string& to_address,
                               double seconds) {
  StreamResult result;
  const Endpoints ends = open_endpoints(from_ns, to_ns, to_address);
  if (!ends.open()) return result;
  const int listener = ends.listener, sender = ends.sender;
  sockaddr_in address = ends.address;
  const timeval limit = kSocketLimit;
  std::thread receiver([&] {
    const int peer = accept(listener, nullptr, nullptr);
    if (peer < 0) return;
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    std::vector<char> buffer(1 << 20);
    std::chrono::steady_clock::time_point first;
    for (ssize_t n; (n = recv(peer, buffer.data(), buffer.size(), 0)) > 0;) {
      const auto now = std::chrono::steady_clock::now();
      if (result.bytes == 0) first = now;
      const auto window = static_cast<size_t>(std::chrono::duration<double>(now - first).count() / kStreamWindow);
      if (window >= result.window_bytes.size()) result.window_bytes.resize(window + 1, 0.0);
      result.window_bytes[window] += static_cast<double>(n);
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

namespace detail {
inline bool send_all(int fd, const char* data, size_t size) {
  for (ssize_t n = 0; size > 0; data += n, size -= static_cast<size_t>(n)) {
    if ((n = send(fd, data, size, MSG_NOSIGNAL)) <= 0) return false;
  }
  return true;
}
inline bool recv_all(int fd, char* data, size_t size) {
  for (ssize_t n = 0; size > 0; data += n, size -= static_cast<size_t>(n)) {
    if ((n = recv(fd, data, size, 0)) <= 0) return false;
  }
  return true;
}
}  // namespace detail

struct MessageTimes {
  bool connected = false;
  double after_idle_s = 0;     // median time of a message sent after `idle_s` of silence
  double back_to_back_s = 0;   // median time of one sent at once after the previous one's answer
};

// Over one TCP connection (TCP_NODELAY) from a socket in `from_ns` to one in `to_ns`: `rounds`
// times, waits `idle_s`, sends a message of `size` bytes and waits for the receiver's 1-byte
// answer, then at once another; gives the median time of each kind. As training sends a gradient
// after computing; a warm-up of 4 MiB messages first opens the congestion window.
inline MessageTimes tcp_message_times(const std::string& from_ns, const std::string& to_ns,
                                      const std::string& to_address, size_t size, double idle_s, int rounds) {
  MessageTimes result;
  const Endpoints ends = open_endpoints(from_ns, to_ns, to_address);
  if (!ends.open()) return result;
  const int listener = ends.listener, sender = ends.sender;
  sockaddr_in address = ends.address;
  const timeval limit = kSocketLimit;
  const int one = 1;
  setsockopt(sender, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  constexpr size_t kWarmUp = 4 << 20;
  std::thread receiver([&] {
    const int peer = accept(listener, nullptr, nullptr);
    if (peer < 0) return;
    setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    setsockopt(peer, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::vector<char> buffer(std::max(size, kWarmUp));
    for (uint64_t n = 0; detail::recv_all(peer, reinterpret_cast<char*>(&n), sizeof(n)) && n > 0 && n <= buffer.size();) {
      if (!detail::recv_all(peer, buffer.data(), n) || !detail::send_all(peer, "x", 1)) break;
    }
    close(peer);
  });
  result.connected = connect(sender, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  if (result.connected) {
    const std::vector<char> data(std::max(size, kWarmUp), 'x');
    const auto message = [&](uint64_t n) {
      const auto start = std::chrono::steady_clock::now();
      char answer = 0;
      if (!detail::send_all(sender, reinterpret_cast<const char*>(&n), sizeof(n)) ||
          !detail::send_all(sender, data.data(), n) || !detail::recv_all(sender, &answer, 1)) {
        return -1.0;
      }
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    for (int i = 0; i < 4; ++i) message(kWarmUp);
    std::vector<double> idle, back_to_back;
    for (int round = 0; round < rounds; ++round) {
      std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
      idle.push_back(message(size));
      back_to_back.push_back(message(size));
    }
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    result.connected = std::min(*std::min_element(idle.begin(), idle.end()),
                                *std::min_element(back_to_back.begin(), back_to_back.end())) >= 0;
    result.after_idle_s = median(idle);
    result.back_to_back_s = median(back_to_back);
    const uint64_t end = 0;
    detail::send_all(sender, reinterpret_cast<const char*>(&end), sizeof(end));
  }
  close(sender);
  if (!result.connected) shutdown(listener, SHUT_RDWR);
  receiver.join();
  close(listener);
  return result;
}

}  // namespace dtbench::testing
