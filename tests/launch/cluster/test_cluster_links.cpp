// A shaped link never runs faster than its rate, as root: after the link was idle (a worker
// computing), a message still takes at least its size at the link's rate, while a stream still
// fills the link. Run alone by CTest (RUN_SERIAL): the streams are the CPU's work too.
#include <fmt/format.h>

#include "launch/cluster/naming.h"
#include "launch/cluster/registry.h"
#include "support/cluster_fixture.h"
#include "support/tcp_stream.h"

namespace dtbench {
namespace {

// tbf counts whole Ethernet frames; a TCP stream's payload is 1448 bytes of each 1514.
constexpr double kFrameBytesPerPayloadByte = 1514.0 / 1448.0;

class ClusterLinks : public testing::ClusterTest {
 protected:
  struct Link {
    std::string from_ns, to_ns, to_address;
  };
  Link link(const std::string& name) {
    const auto record = cluster::read_record(name);
    EXPECT_TRUE(record.has_value());
    return {cluster::namespace_name(name, 0), cluster::namespace_name(name, 1),
            cluster::host_address(record ? record->slot : 0, 1)};
  }
  // The median seconds of a message of `bytes` sent after 10 ms idle, and answered.
  static double after_idle(const Link& l, size_t bytes) {
    const auto rounds = testing::tcp_message_rounds(l.from_ns, l.to_ns, l.to_address, bytes, 10.0, 25);
    EXPECT_EQ(rounds.size(), 25u);
    return testing::median(rounds);
  }
  // A 1 s stream each way: the slower direction's rate on the wire, in Gbit/s (frames, not payload),
  // the best of three tries: the kernel's own work (the namespaces earlier tests left to tear down)
  // can only slow a stream, never speed it past the link.
  static double stream_gbit(const std::string& name) {
    const auto record = cluster::read_record(name);
    double slowest = 1e9;
    for (const auto& [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
      double best = 0;
      for (int attempt = 0; attempt < 3; ++attempt) {
        const auto s = testing::tcp_stream(cluster::namespace_name(name, from), cluster::namespace_name(name, to),
                                           cluster::host_address(record->slot, to), 1.0);
        EXPECT_TRUE(s.connected);
        best = std::max(best, s.gbit_per_s() * kFrameBytesPerPayloadByte);
      }
      slowest = std::min(slowest, best);
    }
    return slowest;
  }
};

TEST_F(ClusterLinks, AfterIdleA1GbitLinkSendsNoBurstFasterThanItsRateAndAStreamStillFillsIt) {
  const std::string name = unique_name();
  up(name, 2, "1gbit");
  const Link l = link(name);
  // One peak bucket (66 KB, network.h) may still leave at once, so 128 KiB may take as little as
  // half its time at the rate in principle; measured 0.88-1.17 (0.29 before the peak bucket).
  for (const auto& [bytes, least] : {std::pair{size_t{128} << 10, 0.8}, std::pair{size_t{1} << 20, 0.95}}) {
    const double seconds = after_idle(l, bytes), at_rate = static_cast<double>(bytes) * 8 / 1e9;
    std::printf("%zu KiB after 10 ms idle at 1gbit: %.3f ms, %.2f of the time at the rate\n", bytes >> 10,
                seconds * 1e3, seconds / at_rate);
    EXPECT_GE(seconds, least * at_rate) << bytes << " bytes left faster than the link's rate";
  }
  // 0.96-0.99 when this test runs alone; 0.86-0.90 right after the tests that freeze hosts, for a
  // reason not yet found (the kernel tearing their namespaces down is the suspect).
  const double gbit = stream_gbit(name);
  std::printf("1 s stream at 1gbit, slower direction: %.3f Gbit/s on the wire\n", gbit);
  EXPECT_GE(gbit, 0.85);
}

// At 10 Gbit a message after idle pays the CPU's per-message costs, more than the link's time, so
// no burst outruns the rate; a stream reaches 0.95 of the rate on the wire where this machine's CPU
// (the same hosts unshaped) moves more than that (17 Gbit/s on a 2-core EPYC), 0.9 of it checked.
TEST_F(ClusterLinks, AfterIdleA10GbitLinkSendsNoBurstFasterThanItsRateAndStreamsAtTheCpusCeiling) {
  const std::string fast = unique_name(), unshaped = unique_name();
  up(fast, 2, "10gbit");
  up(unshaped, 2, "none");
  const Link l = link(fast);
  for (const size_t bytes : {size_t{128} << 10, size_t{1} << 20, size_t{2} << 20}) {
    const double seconds = after_idle(l, bytes), at_rate = static_cast<double>(bytes) * 8 / 1e10;
    std::printf("%zu KiB after 10 ms idle at 10gbit: %.3f ms, %.2f of the time at the rate\n", bytes >> 10,
                seconds * 1e3, seconds / at_rate);
    EXPECT_GE(seconds, 0.95 * at_rate) << bytes << " bytes left faster than the link's rate";
  }
  const double ceiling = stream_gbit(unshaped), gbit = stream_gbit(fast);
  std::printf("1 s stream, slower direction: %.2f Gbit/s at 10gbit, %.2f unshaped (the CPU's ceiling)\n", gbit,
              ceiling);
  EXPECT_GE(gbit, 0.8 * std::min(10.0, ceiling));  // 0.98-0.99 alone, 0.82 once after other tests
}

}  // namespace
}  // namespace dtbench
