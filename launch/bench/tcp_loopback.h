#pragma once
// The wire a parameter-server round is held against: plain TCP connections over 127.0.0.1,
// measured by the same command in the same minute. A TCP round has the shape of a ps round with
// no gRPC, no HTTP/2 and no update: the client sends `bytes`, an echo thread reads all of them and
// sends `bytes` back, the client reads them. For a small payload that is the round trip (RTT); for
// a large one, two back-to-back streams, each at the loopback's streaming rate.
//
// With several connections (one per bench ps worker), each has its own client and echo thread and
// every round starts on all of them at once: the bytes a sync server moves for N workers, moved by
// N plain connections on the same cores.
#include <cstdint>

namespace dtbench {

struct TcpRoundResult {
  int64_t bytes = 0;        // per connection and direction
  int connections = 1;
  int iterations = 0;
  double mean_seconds = 0;  // one round: `bytes` out and `bytes` back on every connection
  double min_seconds = 0;
  double gbps = 0;          // 2 · bytes / mean_seconds / 1e9, per connection, as bench ps counts a round
};

// Echo rounds of `bytes` (>= 1) on `connections` (>= 1) connections at once, for about
// `target_ms` (at least 3, at most 1000 rounds, after `warmup` untimed ones), on TCP_NODELAY
// sockets. A round lasts until the slowest connection's echo is back. Throws IoError when a
// socket call fails.
TcpRoundResult measure_tcp_rounds(int64_t bytes, double target_ms, int warmup, int connections = 1);

}  // namespace dtbench
