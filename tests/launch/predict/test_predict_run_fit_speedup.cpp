// `predict --fit RUN_DIR... --compute-speedup X`: the fit's compute divided by X, its
// communication kept, against figures worked by hand on the synthetic runs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/util/error.h"
#include "launch/predict/run_fit.h"
#include "tests/launch/predict/synthetic_fit_runs.h"

namespace dtbench {
namespace {

// Workers twice as fast as the runs' (--compute-speedup 2): every compute draw halves, so the
// slowest of 4 does too, and the communication stays the runs'. By hand at 4: ps-sync 14.375 ms
// compute + 6.5 push and pull + 7 the rest; the ring 14.375 + its 6 steps + 2.25 ms delays. The
// checks on the runs themselves are about the runs and stay.
TEST(RunFit, ComputingFasterDividesTheComputeAndKeepsTheCommunication) {
  RunFit sync = fit_on_runs({server_run("ps-sync", 2), server_run("ps-sync", 3)}, nullptr);
  const std::vector<OwnRunCheck> own = sync.own_runs;
  divide_compute(sync, 2);
  EXPECT_NEAR(sync.mean_compute_s, 0.010, 1e-12);
  const RunFitStep four = predict_from_runs(sync, 4);
  EXPECT_NEAR(four.step.step_s, 0.014375 + 0.0065 + 0.007, 1e-9);
  EXPECT_NEAR(four.straggler_s, 0.014375 - 0.010, 1e-12);
  ASSERT_EQ(sync.own_runs.size(), own.size());
  for (size_t i = 0; i < own.size(); ++i) EXPECT_DOUBLE_EQ(sync.own_runs[i].fitted_s, own[i].fitted_s);
  EXPECT_NE(fmt::format("{}", fmt::join(sync.notes, "; ")).find("compute divided by 2"), std::string::npos);

  RunFit ring = fit_on_runs({allreduce_run(2), allreduce_run(3)}, nullptr);
  divide_compute(ring, 2);
  EXPECT_NEAR(predict_from_runs(ring, 4).step.step_s, 0.014375 + 6 * (200e-6 + 262'144 / 50e6) + 0.00225, 1e-9);
  for (double bad : {0.0, -1.0, std::nan("")}) EXPECT_THROW(divide_compute(ring, bad), InputError) << bad;
}

}  // namespace
}  // namespace dtbench
