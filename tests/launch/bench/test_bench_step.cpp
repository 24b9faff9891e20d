// bench step: every dtbench-versus-PyTorch ratio comes from this command, so its figures are checked
// against each other and against a clock of the test's own: the phases add up to the step, images/s
// is the batch over the step, and the step's median agrees with what more steps cost in wall time.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "support/cli_helpers.h"

namespace dtbench {
namespace {

using testing::dtbench;
using testing::Outcome;

struct StepRow {
  std::string model;
  int batch = 0;
  double forward_ms = 0, backward_ms = 0, update_ms = 0, step_ms = 0, images_per_s = 0, peak_mib = 0;
};

// The table row of `model` in bench step's output; model empty when there is none.
StepRow row_of(const std::string& output, const std::string& model) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    StepRow row;
    if (words >> row.model >> row.batch >> row.forward_ms >> row.backward_ms >> row.update_ms >> row.step_ms >>
            row.images_per_s >> row.peak_mib &&
        row.model == model) {
      return row;
    }
  }
  return {};
}

// Runs bench step and returns its row and the command's wall time in seconds.
std::pair<StepRow, double> timed_bench(const std::string& model, int batch, int steps) {
  const auto start = std::chrono::steady_clock::now();
  // The rules' algorithms: measuring them would add to the start-up a time that depends on the
  // machine's load (a too-busy measurement is not cached, so every command would measure again).
  const Outcome r = dtbench(fmt::format(
      "bench step --model {} --batch {} --threads 1 --steps {} --warmup 1 --conv-algorithms rules", model, batch, steps));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const StepRow row = row_of(r.output, model);
  EXPECT_EQ(row.model, model) << r.output;
  return {row, wall};
}

TEST(BenchStep, ItsFiguresAddUpAndAgreeWithTheWallClock) {
  // Each command's wall time holds its start-up too (the BLAS core's choice, the model's build), which
  // moves by tens of ms beside other tests: the least of two runs each, and 320 steps between them
  // (a LeNet-5 step on MNIST takes about a millisecond on an AVX-512 machine: 80 steps were within
  // the start-up's noise).
  const auto least_wall = [](int steps) {
    auto first = timed_bench("lenet5", 64, steps);
    const auto second = timed_bench("lenet5", 64, steps);
    first.second = std::min(first.second, second.second);
    return first;
  };
  const auto [few, few_wall] = least_wall(2);
  const auto [many, many_wall] = least_wall(322);
  ASSERT_EQ(many.model, "lenet5");
  EXPECT_EQ(many.batch, 64);
  for (double phase : {many.forward_ms, many.backward_ms, many.update_ms}) EXPECT_GT(phase, 0.0);
  // The table prints three decimals: the step is its phases' sum up to rounding.
  EXPECT_NEAR(many.step_ms, many.forward_ms + many.backward_ms + many.update_ms, 2e-3);
  EXPECT_NEAR(many.images_per_s, 1e3 * 64 / many.step_ms, 0.001 * many.images_per_s + 0.1);
  EXPECT_GT(many.peak_mib, 1.0);
  // 320 more steps cost about 320 medians of wall time (start-up and model building cancel out). Wide
  // bounds: the suite runs beside other tests; a bench that timed nothing, or the wrong thing, misses
  // by far more.
  const double per_step_ms = 1e3 * (many_wall - few_wall) / 320;
  EXPECT_GT(per_step_ms, 0.5 * many.step_ms) << "median " << many.step_ms << " ms, wall per step " << per_step_ms;
  EXPECT_LT(per_step_ms, 3.0 * many.step_ms) << "median " << many.step_ms << " ms, wall per step " << per_step_ms;
  EXPECT_GT(few.step_ms, 0.0);
}

TEST(BenchStep, ALargerBatchTakesLongerAndAnUnknownModelIsNamed) {
  const StepRow small = timed_bench("lenet5", 8, 10).first;
  const StepRow large = timed_bench("lenet5", 128, 10).first;
  EXPECT_GT(large.step_ms, 2.0 * small.step_ms) << small.step_ms << " ms at 8, " << large.step_ms << " ms at 128";
  const Outcome r = dtbench("bench step --model lenet7 --steps 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("lenet7"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("lenet5"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dtbench
