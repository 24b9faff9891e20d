// The ring's chunk over messages between two ranks is the largest eager message of Open MPI's TCP
// BTL, read from the library (so an --mca setting counts); between three or more it is 1 MiB; a
// chunk the user names is kept. Ranks that would pick differently agree on the smallest, since
// each receives in chunks of its own size.
#include <fmt/format.h>

#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using testing::Outcome;

class RingChunk : public testing::MpirunTest {
 protected:
  // `bench allreduce` of the ring over messages, 2 ranks, rank 0 writing the JSON; mpirun's
  // options, and what rank 1's command line starts with (`env VAR=value`), given.
  nlohmann::json bench(const std::string& mpirun_options, const std::string& second_rank_prefix = "",
                       const std::string& chunk = "", int ranks = 2) {
    const std::filesystem::path json = root_ / "bench.json";
    const std::string arguments = fmt::format(
        "bench allreduce --sizes 4B,100000B,1MiB --transport ring --ring-path messages --iters 2 --warmup 1 {} --json {}",
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

TEST_F(RingChunk, OverMessagesItIsTheLargestEagerMessageTheLibraryIsSetTo) {
  const auto report = bench("--mca btl_tcp_eager_limit 40000");
  ASSERT_TRUE(report.contains("chunk_bytes")) << output_;
  EXPECT_EQ(report["chunk_bytes"], 40000 - 64);
  EXPECT_NE(report["chunk_source"].get<std::string>().find("btl_tcp_eager_limit 40000 B"), std::string::npos)
      << report["chunk_source"];
  EXPECT_NE(output_.find("chunk 39936 B: the largest eager message"), std::string::npos) << output_;
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
}

// Rank 1 runs with a smaller eager limit than rank 0. Each would cut its receives to its own
// chunk; a 100,000-byte segment then arrives in pieces the other did not post, and MPI truncates.
TEST_F(RingChunk, RanksThatWouldPickDifferentChunksTakeTheSmallestAndSumCorrectly) {
  const auto report = bench("", "env OMPI_MCA_btl_tcp_eager_limit=20000");
  ASSERT_TRUE(report.contains("chunk_bytes")) << output_;
  EXPECT_EQ(report["chunk_bytes"], 20000 - 64);
  EXPECT_NE(report["chunk_source"].get<std::string>().find("the smallest any rank picked"), std::string::npos)
      << report["chunk_source"];
}

}  // namespace
}  // namespace dtbench
