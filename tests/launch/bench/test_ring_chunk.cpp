// The ring's chunk over messages between two ranks is the largest eager message of Open MPI's TCP
// BTL, read from the library (so an --mca setting counts); between three or more it is 1 MiB; a
// chunk the user names is kept. Ranks that would pick differently agree on the smallest, since
// each receives in chunks of its own size.
#include <algorithm>

#include <fmt/format.h>

#include "allreduce/ring_chunk.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using testing::Outcome;

class RingChunk : public testing::MpirunTest {
 protected:
  // `bench allreduce` of the ring over messages, 2 ranks, rank 0 writing the JSON; mpirun's
  // options, and what rank 1's command line starts with (`env VAR=value`), given.
  nlohmann::json bench(const std::string& mpirun_options, const std::string& second_rank_prefix = "",
                       const std::string& chunk = "", int ranks = 2, const std::string& sizes = "4B,100000B,1MiB") {
    const std::filesystem::path json = root_ / "bench.json";
    const std::string arguments = fmt::format(
        "bench allreduce --sizes {} --transport ring --ring-path messages --iters 2 --warmup 1 {} --json {}", sizes,
        chunk, json.string());
    const std::string command =
        second_rank_prefix.empty()
            ? fmt::format("{} --allow-run-as-root --oversubscribe {} -np {} {} {}", MPIEXEC, mpirun_options, ranks,
                          DTBENCH_BINARY, arguments)
            : fmt::format("{} --allow-run-as-root --oversubscribe {} -np 1 {} {} : -np 1 {} {} {}", MPIEXEC,
                          mpirun_options, DTBENCH_BINARY, arguments, second_rank_prefix, DTBENCH_BINARY, arguments);
    const Outcome r = testing::shell("timeout --kill-after=10 120 " + command);
    EXPECT_EQ(r.exit_code, 0) << r.output;  // non-zero too when an element came out wrong
    output_ = r.output;
    return r.exit_code == 0 ? testing::read_json(json) : nlohmann::json::object();
  }
  std::string output_;
};

// The timing of `bytes` in the bench's JSON, and that its row ran the chunk the rule picks from it.
// The probe is `most_probe_bytes` (the size, or the cap) unless a round of it took longer than
// kChunkProbeRoundSeconds, which on a machine busy with other tests a 64 MiB round on one host
// can: then fewer, but never fewer than three eager chunks a step.
void expect_timed_choice(const nlohmann::json& report, int64_t bytes, int64_t eager_bytes, int64_t most_probe_bytes) {
  ASSERT_TRUE(report.contains("chunk_timing") && report["chunk_timing"].is_array()) << report.dump();
  const nlohmann::json* timing = nullptr;
  for (const nlohmann::json& t : report["chunk_timing"]) {
    if (t["bytes"] == bytes) timing = &t;
  }
  ASSERT_NE(timing, nullptr) << report["chunk_timing"].dump();
  EXPECT_EQ((*timing)["eager_bytes"], eager_bytes);
  EXPECT_EQ((*timing)["large_bytes"], kLargeMessageChunkBytes);
  const auto probe_bytes = (*timing)["probe_bytes"].get<int64_t>();
  EXPECT_LE(probe_bytes, most_probe_bytes);
  EXPECT_GE(probe_bytes, std::min(most_probe_bytes, 2 * 3 * eager_bytes / 4 * 4));
  const double eager_ms = (*timing)["eager_ms"].get<double>(), large_ms = (*timing)["large_ms"].get<double>();
  EXPECT_GT(eager_ms, 0);
  EXPECT_GT(large_ms, 0);
  const int64_t chosen = large_chunk_wins(eager_ms, large_ms) ? kLargeMessageChunkBytes : eager_bytes;
  EXPECT_EQ((*timing)["chunk_bytes"], chosen);
  for (const nlohmann::json& row : report["rows"]) {
    if (row["bytes"] == bytes) {
      EXPECT_EQ(row["ring"]["chunk_bytes"], chosen) << row.dump();
    }
  }
  EXPECT_EQ(report["chunk_bytes"], eager_bytes);  // the rule's, for the sizes not timed
}

// Buffers whose halves fit in one eager chunk go as one message a step whatever the chunk: nothing
// is timed, and the chunk is the library's largest eager message.
TEST_F(RingChunk, OverMessagesItIsTheLargestEagerMessageTheLibraryIsSetTo) {
  const auto report = bench("--mca btl_tcp_eager_limit 40000", "", "", 2, "4B,64KiB");
  ASSERT_TRUE(report.contains("chunk_bytes")) << output_;
  EXPECT_EQ(report["chunk_bytes"], 40000 - 64);
  EXPECT_TRUE(report["chunk_timing"].is_null()) << report.dump();
  EXPECT_EQ(report["rows"][1]["ring"]["chunk_bytes"], 40000 - 64);
  EXPECT_NE(report["chunk_source"].get<std::string>().find("btl_tcp_eager_limit 40000 B"), std::string::npos)
      << report["chunk_source"];
  EXPECT_NE(output_.find("chunk 39936 B: the largest eager message"), std::string::npos) << output_;
}

// Larger buffers: each size is timed with the eager chunk and 1 MiB (on at most 64 MiB), and runs
// with the faster, 1 MiB only by more than the margin; a size whose half is one eager chunk is not.
TEST_F(RingChunk, OverMessagesEachLargerSizeIsTimedWithTheEagerChunkAndOneMebibyte) {
  const auto report = bench("--mca btl_tcp_eager_limit 40000", "", "", 2, "4B,64KiB,100000B,3MiB");
  ASSERT_TRUE(report.contains("chunk_bytes")) << output_;
  ASSERT_EQ(report["chunk_timing"].size(), 2u) << report["chunk_timing"].dump();
  expect_timed_choice(report, 100000, 40000 - 64, 100000);
  expect_timed_choice(report, 3 << 20, 40000 - 64, 3 << 20);
  EXPECT_NE(output_.find("# ring chunk for 3 MiB: "), std::string::npos) << output_;
  const auto capped = bench("", "", "", 2, "80MiB");
  ASSERT_TRUE(capped.contains("chunk_bytes")) << output_;
  expect_timed_choice(capped, 80 << 20, 65536 - 64, kChunkProbeMaxBytes);
}

TEST(RingChunkRule, OneMebibyteReplacesTheEagerChunkOnlyWhenFasterByMoreThanTheMargin) {
  EXPECT_TRUE(large_chunk_wins(10.0, 9.0));
  EXPECT_FALSE(large_chunk_wins(10.0, 9.7));  // within the margin: eager chunks fill a link
  EXPECT_FALSE(large_chunk_wins(10.0, 12.0));
}

// Each rank sends only to its right and receives only from its left: no connection carries data
// both ways, and large chunks cost less per byte.
TEST_F(RingChunk, BetweenThreeOrMoreRanksItIsOneMebibyte) {
  const auto report = bench("--mca btl_tcp_eager_limit 40000", "", "", 3);
  ASSERT_TRUE(report.contains("chunk_bytes")) << output_;
  EXPECT_EQ(report["chunk_bytes"], 1 << 20);
  EXPECT_NE(report["chunk_source"].get<std::string>().find("neighbours differ"), std::string::npos)
      << report["chunk_source"];
}

TEST_F(RingChunk, ANamedChunkIsKept) {
  const auto report = bench("--mca btl_tcp_eager_limit 40000", "", "--chunk-kb 8");
  ASSERT_TRUE(report.contains("chunk_bytes")) << output_;
  EXPECT_EQ(report["chunk_bytes"], 8192);
  EXPECT_EQ(report["chunk_source"], "comm.chunk_kb");
  EXPECT_TRUE(report["chunk_timing"].is_null()) << report.dump();
}

// The file also carries what summing a received byte costs on this host, which `predict` then
// takes from it rather than timing the machine it runs on (tests/launch/predict).
TEST_F(RingChunk, TheFileRecordsWhatSummingAByteCostsOnThisHost) {
  const auto report = bench("--mca btl_tcp_eager_limit 40000", "", "--chunk-kb 8");
  ASSERT_TRUE(report.contains("reduce_ns_per_byte")) << output_ << report.dump();
  EXPECT_GT(report["reduce_ns_per_byte"].get<double>(), 0.0);
  EXPECT_LT(report["reduce_ns_per_byte"].get<double>(), 1000.0);  // under a microsecond a byte
}

// Rank 1 runs with a smaller eager limit than rank 0. Each would cut its receives to its own
// chunk; a 100,000-byte segment then arrives in pieces the other did not post, and MPI truncates.
// The eager chunk both time against 1 MiB is the smaller, and the sums come out right either way.
TEST_F(RingChunk, RanksThatWouldPickDifferentChunksTakeTheSmallestAndSumCorrectly) {
  const auto report = bench("", "env OMPI_MCA_btl_tcp_eager_limit=20000");
  ASSERT_TRUE(report.contains("chunk_bytes")) << output_;
  expect_timed_choice(report, 1 << 20, 20000 - 64, 1 << 20);
  EXPECT_NE(report["chunk_source"].get<std::string>().find("the smallest any rank picked"), std::string::npos)
      << report["chunk_source"];
}

}  // namespace
}  // namespace dtbench
