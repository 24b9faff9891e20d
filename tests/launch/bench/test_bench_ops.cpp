// bench ops: the flop and byte counts against hand computations, the command end to end on the
// small shapes (every requested operator reported, rates positive and within reach of the
// ceiling they are held against), and bad options rejected before anything is measured.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "launch/bench/machine_ceilings.h"
#include "launch/bench/op_costs.h"
#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using testing::dtbench;
using testing::Outcome;
using testing::TempDirTest;

TEST(OpCosts, GemmAndConvolutionFlops) {
  EXPECT_EQ(op_costs::gemm_flops(2, 3, 4), 48.0);  // 2·2·3·4
  // B 2, C 3, 8x8, Cout 4, 3x3, stride 1, pad 1: an 8x8 output. 2·B·Cout·C·k·k·Ho·Wo:
  // 2 · 2 · 4 · 3 · 9 · 64 = 27648.
  const ConvSizes same{.batch = 2, .in_channels = 3, .height = 8, .width = 8, .out_channels = 4, .kernel = 3,
                       .stride = 1, .padding = 1, .out_height = 8, .out_width = 8};
  EXPECT_EQ(op_costs::conv2d_flops(same), 27648.0);
  // B 1, C 16, 7x7, Cout 32, 3x3, stride 2, pad 1: a 4x4 output; 2 · 32 · 16 · 9 · 16 = 147456.
  const ConvSizes strided{.batch = 1, .in_channels = 16, .height = 7, .width = 7, .out_channels = 32, .kernel = 3,
                          .stride = 2, .padding = 1, .out_height = 4, .out_width = 4};
  EXPECT_EQ(op_costs::conv2d_flops(strided), 147456.0);
}

TEST(OpCosts, MemoryBoundBytes) {
  // 1000 floats: forward x + y, backward dy + y + dx.
  EXPECT_EQ(op_costs::activation_forward_bytes(1000), 8000.0);
  EXPECT_EQ(op_costs::activation_backward_bytes(1000), 12000.0);
  EXPECT_EQ(op_costs::batchnorm_forward_bytes(1000), 8000.0);
  EXPECT_EQ(op_costs::batchnorm_backward_bytes(1000), 12000.0);
  // A 4x4 plane pooled 2x2 to 2x2: 16 inputs, 4 outputs (and 4 int32 argmax for max pooling).
  EXPECT_EQ(op_costs::maxpool_bytes(16, 4), 4.0 * (16 + 4 + 4));
  EXPECT_EQ(op_costs::avgpool_bytes(16, 4), 4.0 * (16 + 4));
  // 8 x 10 logits read, 8 x 10 gradients written, 8 labels read.
  EXPECT_EQ(op_costs::softmax_xent_bytes(8, 10), 4.0 * (80 + 80 + 8));
  // One million parameters: SGD p, g, v in and p, v out; Adam p, g, m, v in and p, m, v out.
  EXPECT_EQ(op_costs::sgd_momentum_bytes(1000000), 20e6);
  EXPECT_EQ(op_costs::adam_bytes(1000000), 28e6);
}

// The ceilings measured before and after the operators: each probe keeps its better reading, so
// the best GEMM and the bandwidth may come from different measurements.
TEST(MachineCeilings, KeepBestTakesEachProbesBetterReading) {
  MachineCeilings before{.threads = 2,
                         .gemm = {{.size = 512, .gflops = 100}, {.size = 1024, .gflops = 300}},
                         .stream_array_bytes = 1 << 20,
                         .stream = {{.threads = 2, .copy_gbps = 10, .triad_gbps = 30, .update_gbps = 20}}};
  MachineCeilings after = before;
  after.gemm[0].gflops = 400;
  after.stream[0] = {.threads = 2, .copy_gbps = 50, .triad_gbps = 5, .update_gbps = 25};
  before.keep_best(after);
  EXPECT_EQ(before.gemm[0].gflops, 400);
  EXPECT_EQ(before.gemm[1].gflops, 300);
  EXPECT_EQ(before.best_gemm().size, 512);
  EXPECT_EQ(before.stream[0].copy_gbps, 50);
  EXPECT_EQ(before.stream[0].triad_gbps, 30);
  EXPECT_EQ(before.stream[0].update_gbps, 25);
  EXPECT_EQ(before.bandwidth_gbps(), 50);

  after.gemm.pop_back();
  EXPECT_THROW(before.keep_best(after), std::logic_error);
}

class BenchOps : public TempDirTest {};

// On one thread: a pass and the ceiling it is held against then both run on one core, and a
// second core that other jobs keep busy cannot slow one of them down and not the other.
TEST_F(BenchOps, ReportsEveryRequestedOpWithinItsCeiling) {
  const auto json = root_ / "ops.json";
  const Outcome r = dtbench("bench ops --sizes small --ops gemm,relu,sgd --iters 2 --warmup 1 --threads 1 --json " +
                            json.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("compute ceiling"), std::string::npos) << r.output;
  const nlohmann::json report = testing::read_json(json);
  const nlohmann::json& ceilings = report["ceilings"];
  EXPECT_EQ(ceilings["threads"], 1);
  ASSERT_GT(ceilings["gemm_gflops"].get<double>(), 0) << ceilings;
  ASSERT_GT(ceilings["bandwidth_gbps"].get<double>(), 0) << ceilings;

  std::set<std::string> ops;
  for (const nlohmann::json& row : report["rows"]) {
    SCOPED_TRACE(row.dump());
    const std::string op = row["op"];
    ops.insert(op);
    EXPECT_NE(r.output.find(row["shape"].get<std::string>()), std::string::npos);  // in the table too
    EXPECT_EQ(row["iterations"], 2);
    EXPECT_GT(row["median_ms"].get<double>(), 0);
    EXPECT_LE(row["min_ms"].get<double>(), row["median_ms"].get<double>());
    const bool compute = op == "gemm";
    EXPECT_EQ(row["unit"], compute ? "GFLOP/s" : "GB/s");
    const double ceiling = ceilings[compute ? "gemm_gflops" : "bandwidth_gbps"].get<double>();
    EXPECT_EQ(row["ceiling"].get<double>(), ceiling);
    const double rate = row["rate"].get<double>();
    EXPECT_GT(rate, 0);
    // The reported rate is the reported work over the median (the counts themselves are checked
    // against hand computations in OpCosts); a gross overcount shows as a rate far above the
    // ceiling. Not any rate above it: with more test jobs than cores, both ceiling runs can fall in
    // busier moments than an operator's (an operator at 150 % of a ceiling has been seen then).
    const double work = row[compute ? "flops" : "bytes"].get<double>();
    EXPECT_NEAR(rate, work / (row["median_ms"].get<double>() * 1e-3) / 1e9, 1e-6 * rate);
    EXPECT_LE(rate, 2.0 * ceiling);
    EXPECT_NEAR(row["percent_of_ceiling"].get<double>(), 100.0 * rate / ceiling, 1e-6 * rate);
  }
  EXPECT_EQ(ops, (std::set<std::string>{"gemm", "relu", "sgd"}));
}

TEST(BenchOpsOptions, UnknownOpIsNamedWithTheKnownOnes) {
  const Outcome r = dtbench("bench ops --ops gemm,softmax --iters 1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const std::string word : {"--ops", "'softmax'", "softmax_xent", "relu", "adam"}) {
    EXPECT_NE(r.output.find(word), std::string::npos) << word << " not in: " << r.output;
  }
}

TEST(BenchOpsOptions, BadCountsAndSizeSetsAreRejected) {
  const struct {
    std::string arguments, expected;
  } cases[] = {{"--iters 0", "--iters must be at least 1, got 0"},
               {"--iters -3", "--iters must be at least 1, got -3"},
               {"--warmup -1", "--warmup must be 0 or more"},
               {"--sizes huge", "--sizes: unknown size set 'huge'; choose small or default"}};
  for (const auto& c : cases) {
    const Outcome r = dtbench("bench ops --ops relu " + c.arguments);
    EXPECT_EQ(r.exit_code, 2) << c.arguments << ": " << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.arguments << ": " << r.output;
  }
}

}  // namespace
}  // namespace dtbench
