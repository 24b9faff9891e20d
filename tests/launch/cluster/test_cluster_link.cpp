// The emulated link against a real one, as root: after a pause a message takes no less than its
// time at the rate, and one stream fills the link, each way. Run alone by CTest: the figures are
// of the two cores, which a neighbouring test would share.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "launch/cluster/naming.h"
#include "launch/cluster/network.h"
#include "launch/cluster/registry.h"
#include "support/cluster_fixture.h"
#include "support/tcp_stream.h"

namespace dtbench {
namespace {

using testing::Outcome;

class ClusterLink : public testing::ClusterTest {};

// A real link puts every frame on the wire at its rate however long it was idle; a token bucket
// lets what it holds leave at once. The cluster's bucket holds 31250 B (0.25 ms at 1 Gbit), so
// after 10 ms of silence (a worker computing) a message takes no less than its frames' time at
// the rate less that (a bucket of a whole message would send it at once); back to back it takes
// its time at the rate; and one stream still fills the link, each way.
TEST_F(ClusterLink, AnIdleLinkSendsNoFasterThanItsRateAndOneStreamFillsIt) {
  const std::string name = unique_name();
  up(name, 2, "1gbit");
  const auto record = cluster::read_record(name);
  ASSERT_TRUE(record.has_value());
  const Outcome status = testing::dtbench("cluster status " + name);
  // The bucket as tc keeps it (31250 B rounded to its clock), small packets first and the packets'
  // largest size, each way.
  for (const char* way : {"in", "out"}) {
    const std::regex shaping(fmt::format(R"({}: htb rate 1Gbit ceil 1Gbit burst 31\d{{3}}b cburst 31\d{{3}}b, )"
                                         R"(packets under 256 B first, packets <= 15625 B)", way));
    EXPECT_TRUE(std::regex_search(status.output, shaping)) << status.output;
  }
  constexpr double kRate = 1e9;
  // TCP/IP and Ethernet headers: 1448 bytes of payload in each 1514-byte frame that HTB counts.
  constexpr double kPayloadPerWireByte = 1448.0 / 1514.0;
  constexpr double kBucketBytes = 31250;
  for (const auto& [from, to] : {std::pair{0, 1}, std::pair{1, 0}}) {
    const std::string from_ns = cluster::namespace_name(name, from), to_ns = cluster::namespace_name(name, to);
    const std::string to_address = cluster::host_address(record->slot, to);
    for (const size_t size : {size_t{128} << 10, size_t{1} << 20}) {
      const auto times = testing::tcp_message_times(from_ns, to_ns, to_address, size, 0.010, 15);
      ASSERT_TRUE(times.connected) << "host " << from << " -> host " << to;
      const double at_rate = static_cast<double>(size) * 8 / kRate;
      std::printf("host %d -> host %d, %zu KiB: after 10 ms idle %.3f ms, back to back %.3f ms, at the rate %.3f ms\n",
                  from, to, size >> 10, times.after_idle_s * 1e3, times.back_to_back_s * 1e3, at_rate * 1e3);
      const double wire_after_bucket = (static_cast<double>(size) / kPayloadPerWireByte - kBucketBytes) * 8 / kRate;
      EXPECT_GE(times.after_idle_s, 0.97 * wire_after_bucket)
          << "host " << from << " -> host " << to << ", " << size << " B";
      EXPECT_GE(times.back_to_back_s, 0.95 * at_rate) << "host " << from << " -> host " << to << ", " << size << " B";
    }
    // The stream's steady rate (the median of its 100 ms windows) and best of five, 3 s apart: on
    // a 2-core virtual machine a stream can lose a moment, or all of it, to whatever else runs (a
    // stall of 100 ms in one of ten 1 s iperf3 runs, with no packet dropped by the shaping), and
    // the machine itself can be slow for seconds (a CI run: every figure of this test 5-40 %
    // slower for 15 s, the stream 0.90-0.93 in three tries; alone, here, 0.975-0.999).
    // Each try's CPU time taken by the hypervisor is printed beside it, so that a miss names it
    // where it was the cause (a Zen 3 EPYC, in a whole suite: five tries at 0.92-0.93, alone 0.98-1.00).
    double best = 0;
    std::string tries;
    for (int attempt = 0; attempt < 5 && best < 0.95; ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(3));
      const double stolen_before = stolen_seconds();
      const auto stream = testing::tcp_stream(from_ns, to_ns, to_address, 2.0);
      ASSERT_TRUE(stream.connected) << "host " << from << " could not connect to host " << to;
      const double share = stream.steady_gbit_per_s() * 1e9 / kPayloadPerWireByte / kRate;
      tries += fmt::format("{}{:.3f} (stolen {:.2f} s)", tries.empty() ? "" : ", ", share, stolen_seconds() - stolen_before);
      best = std::max(best, share);
    }
    std::printf("host %d -> host %d, one stream: %.3f of the rate on the wire; tries %s\n", from, to, best,
                tries.c_str());
    EXPECT_GE(best, 0.95) << "host " << from << " -> host " << to << ": " << tries;
  }
}

// A host's egress is one queue for all it sends, the acknowledgements of what it receives
// included. With one FIFO there (tbf) a stream the host sent elsewhere held those behind its data,
// and what came in slowed: 1 MiB messages from host 0 to host 1 while host 1 streamed to host 2
// took 1.145 times their time at the rate against 1.045 with host 1 quiet (a Zen 5 EPYC). A real
// host's fq_codel serves them first, and so do the cluster's links (1.05 there). Judged on what
// does not depend on the CPU: host 1's small packets went through the class served first, and the
// messages took at most 10 % longer than with host 1 quiet, in the same run. On a Zen 3 EPYC,
// quiet 1.046 of the rate, with the stream 1.063-1.118 in five tries (the bound it had, 1.10 of
// the rate, failed there), and 1.19-1.22 with the small packets' filter removed (one FIFO again),
// which fails both checks.
TEST_F(ClusterLink, AHostsIncomingStreamKeepsItsRateWhileItSendsElsewhere) {
  const std::string name = unique_name();
  up(name, 3, "1gbit");
  const auto record = cluster::read_record(name);
  ASSERT_TRUE(record.has_value());
  const auto ns = [&](int host) { return cluster::namespace_name(name, host); };
  const auto address = [&](int host) { return cluster::host_address(record->slot, host); };
  // Packets host 1 has sent through its class for small packets (1:10, network.cpp).
  const auto small_packets_sent = [&] {
    const Outcome shown = testing::shell("tc -n " + ns(1) + " -s class show dev eth0 classid 1:10");
    std::smatch match;
    const std::regex sent(R"(Sent \d+ bytes (\d+) pkt)");
    return std::regex_search(shown.output, match, sent) ? std::stol(match[1].str()) : -1L;
  };
  constexpr size_t kSize = size_t{1} << 20;
  constexpr int kMessages = 40;
  const double at_rate = static_cast<double>(kSize) * 8 / 1e9;
  const auto quiet = testing::tcp_message_times(ns(0), ns(1), address(1), kSize, 0.0, kMessages);
  testing::StreamResult elsewhere;
  std::thread stream([&] { elsewhere = testing::tcp_stream(ns(1), ns(2), address(2), 3.0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the stream past its slow start
  const long small_before = small_packets_sent();
  const auto busy = testing::tcp_message_times(ns(0), ns(1), address(1), kSize, 0.0, kMessages);
  const long small_after = small_packets_sent();
  stream.join();
  ASSERT_TRUE(quiet.connected && busy.connected && elsewhere.connected);
  std::printf("1 MiB host 0 -> host 1: %.3f of its time at the rate with host 1 quiet, %.3f while host 1 streams "
              "to host 2 (%ld small packets sent first meanwhile); the stream %.3f Gbit/s\n",
              quiet.back_to_back_s / at_rate, busy.back_to_back_s / at_rate, small_after - small_before,
              elsewhere.steady_gbit_per_s());
  ASSERT_GE(small_before, 0) << "no class 1:10 on host 1's link";
  // An acknowledgement at least every two of the largest packets the link lets through.
  const long packet = cluster::link_shaping(cluster::parse_link_rate("1gbit")).max_packet_bytes;
  EXPECT_GE(small_after - small_before, static_cast<long>(kMessages * kSize) / (2 * packet));
  EXPECT_LE(busy.back_to_back_s, 1.10 * quiet.back_to_back_s);
  EXPECT_GE(elsewhere.steady_gbit_per_s(), 0.85);  // and the stream out still has the link
}

// The ring between two hosts, on the cluster's MCA file as it is (Open MPI's defaults: one TCP
// connection per pair, carrying both directions). Its chunks are eager messages, so neither
// direction's data waits for an acknowledgement queued behind the other's: the pair moves the
// link's rate each way. (With 1 MiB chunks, sent by rendezvous, it moved 0.050-0.062 GB/s, half.)
// Timed at start against 1 MiB, the eager chunk stays: where the link binds, 1 MiB is no faster.
TEST_F(ClusterLink, TheRingBetweenTwoHostsMovesTheLinksRateWithOpenMpisDefaults) {
  const std::string name = unique_name();
  const std::filesystem::path dir = up(name, 2, "1gbit");
  const std::filesystem::path json = root_ / "ring.json";
  constexpr double kLinkGbitPerS = 1.0;
  double best = 0;
  std::string output;
  for (int attempt = 0; attempt < 3 && best < 0.85; ++attempt) {
    const Outcome bench = testing::shell(fmt::format(
        "timeout --kill-after=10 120 {} --mca mca_param_files {}/mca-params.conf --hostfile {}/hostfile -np 2 {} "
        "bench allreduce --sizes 16MiB --transport ring --iters 3 --warmup 1 --json {}",
        MPIEXEC, dir.string(), dir.string(), DTBENCH_BINARY, json.string()));
    ASSERT_EQ(bench.exit_code, 0) << bench.output;
    const auto report = testing::read_json(json);
    EXPECT_EQ(report["hosts"], 2);
    EXPECT_LT(report["rows"][0]["ring"]["chunk_bytes"].get<int64_t>(), 1 << 20) << report["chunk_timing"].dump();
    const double busbw = report["rows"][0]["ring"]["busbw_gbps"].get<double>();
    best = std::max(best, busbw * 8 / kLinkGbitPerS);  // payload against the rate on the wire
    output = bench.output;
  }
  std::printf("ring, 16 MiB, 2 hosts at 1 Gbit: busbw %.3f of the link's rate\n", best);
  EXPECT_GE(best, 0.85) << output;
}

// On a slow link the ring's chunk is timed on less than the size: a round of 16 MiB at 100 Mbit
// takes 1.4 s, and three of each chunk would add ten seconds to every start; where a round takes
// longer than a quarter second the link binds, and a smaller probe keeps the eager chunk as well.
TEST_F(ClusterLink, OnASlowLinkTheRingsChunkIsTimedOnLessThanTheSizeAndStaysEager) {
  const std::string name = unique_name();
  const std::filesystem::path dir = up(name, 2, "100mbit");
  const std::filesystem::path json = root_ / "slow.json";
  const auto start = std::chrono::steady_clock::now();
  const Outcome bench = testing::shell(fmt::format(
      "timeout --kill-after=10 120 {} --mca mca_param_files {}/mca-params.conf --hostfile {}/hostfile -np 2 {} "
      "bench allreduce --sizes 16MiB --transport ring --iters 1 --warmup 0 --json {}",
      MPIEXEC, dir.string(), dir.string(), DTBENCH_BINARY, json.string()));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(bench.exit_code, 0) << bench.output;
  const auto report = testing::read_json(json);
  ASSERT_TRUE(report["chunk_timing"].is_array()) << report.dump();
  const auto& timing = report["chunk_timing"][0];
  std::printf("16 MiB at 100 Mbit: timed on %lld B, eager %.1f ms, 1 MiB %.1f ms; the bench %.1f s\n",
              static_cast<long long>(timing["probe_bytes"].get<int64_t>()), timing["eager_ms"].get<double>(),
              timing["large_ms"].get<double>(), seconds);
  EXPECT_LT(timing["probe_bytes"].get<int64_t>(), 8 << 20);
  EXPECT_GE(timing["probe_bytes"].get<int64_t>(), 6 * timing["eager_bytes"].get<int64_t>());
  EXPECT_EQ(report["rows"][0]["ring"]["chunk_bytes"], timing["eager_bytes"]);
  // Two rounds of 16 MiB (the untimed first and the bench's one) and the rest on the smaller probe.
  EXPECT_LT(seconds, 12.0) << bench.output;
}

}  // namespace
}  // namespace dtbench
