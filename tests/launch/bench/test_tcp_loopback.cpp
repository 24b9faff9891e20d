// The TCP loopback probe bench ps holds its rounds against: a round moves exactly the bytes asked
// for both ways (an odd size included) on one connection or several at once, and the rate it
// reports is the one its times imply.
#include <gtest/gtest.h>

#include "core/util/error.h"
#include "launch/bench/tcp_loopback.h"

namespace dtbench {
namespace {

TEST(TcpLoopback, EchoRoundsOfAnOddSizeAreTimedAndCounted) {
  const int64_t bytes = 12345;  // not a multiple of any buffer or page
  const TcpRoundResult r = measure_tcp_rounds(bytes, /*target_ms=*/20, /*warmup=*/1);
  EXPECT_EQ(r.bytes, bytes);
  EXPECT_GE(r.iterations, 3);
  EXPECT_LE(r.iterations, 1000);
  EXPECT_GT(r.min_seconds, 0);
  EXPECT_LE(r.min_seconds, r.mean_seconds);
  EXPECT_NEAR(r.gbps, 2.0 * bytes / r.mean_seconds / 1e9, 1e-9 * r.gbps);
}

TEST(TcpLoopback, ALargeRoundCompletes) {
  // Larger than the default socket buffers: the echo must read the whole round before answering,
  // and the client must not block on sending while the echo blocks on its answer.
  const TcpRoundResult r = measure_tcp_rounds(int64_t{8} << 20, /*target_ms=*/1, /*warmup=*/0);
  EXPECT_EQ(r.iterations, 3);
  EXPECT_GT(r.gbps, 0);
}

TEST(TcpLoopback, SeveralConnectionsEchoTheirRoundsAtOnce) {
  // Larger than the socket buffers, so a connection whose echo thread did not answer would hang.
  const int64_t bytes = (int64_t{3} << 20) + 7;
  const TcpRoundResult r = measure_tcp_rounds(bytes, /*target_ms=*/1, /*warmup=*/1, /*connections=*/3);
  EXPECT_EQ(r.bytes, bytes);
  EXPECT_EQ(r.connections, 3);
  EXPECT_EQ(r.iterations, 3);
  EXPECT_LE(r.min_seconds, r.mean_seconds);
  EXPECT_NEAR(r.gbps, 2.0 * bytes / r.mean_seconds / 1e9, 1e-9 * r.gbps);
}

TEST(TcpLoopback, RefusesAnEmptyRound) { EXPECT_THROW(measure_tcp_rounds(0, 10, 1), InputError); }

TEST(TcpLoopback, RefusesNoConnections) { EXPECT_THROW(measure_tcp_rounds(1024, 10, 1, 0), InputError); }

}  // namespace
}  // namespace dtbench
