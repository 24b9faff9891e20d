// How sure `predict --fit` is, from the runs alone: the largest host count held out and predicted
// from the others, and the range of the fits on one run per host count where runs were repeated —
// each set against the same figure worked another way.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/util/error.h"
#include "launch/predict/run_fit_output.h"
#include "launch/predict/run_fit_sureness.h"
#include "launch/report/table.h"
#include "tests/launch/predict/synthetic_fit_runs.h"

namespace dtbench {
namespace {

// A run as allreduce_run's, with `extra_s` more delay after its bucket each step (so only the
// fitted delays, their mean, move), in a directory of its own.
FitRun delayed(int n, double extra_s, const std::string& name) {
  FitRun run = allreduce_run(n);
  run.step_s += extra_s;
  run.measured.dir = "/runs/" + name;
  return run;
}

TEST(RunFitSureness, TheLargestHostCountIsPredictedFromTheOthersAlone) {
  const std::vector<FitRun> runs = {allreduce_run(2), allreduce_run(3), delayed(4, 0.004, "4a"),
                                    delayed(4, 0.008, "4b")};
  const std::optional<HeldOutCheck> check = held_out_on_own_runs(runs, nullptr);
  ASSERT_TRUE(check.has_value());
  EXPECT_EQ(check->fitted_on, (std::vector<int>{2, 3}));
  EXPECT_EQ(check->workers, 4);
  // The repeats at 4 are set against their mean; the runs at 2 and 3 predict 4 as worked by hand in
  // test_predict_run_fit.cpp: the slowest of 4 draws, 6 ring steps, the delays' mean.
  EXPECT_NEAR(check->measured_s, allreduce_run(4).step_s + 0.006, 1e-12);
  const double by_hand = 0.02875 + 6 * (200e-6 + 262'144 / 50e6) + 0.00225;
  EXPECT_NEAR(check->predicted_s, by_hand, 1e-9);
  EXPECT_NEAR(check->error(), by_hand / check->measured_s - 1, 1e-9);

  // Two host counts leave none to hold out.
  EXPECT_FALSE(held_out_on_own_runs({allreduce_run(2), allreduce_run(3)}, nullptr).has_value());

  // What a user reads, and predict.json.
  RunFit fit = fit_on_runs(runs, nullptr);
  fit.held_out = check;
  const std::vector<RunFitRow> rows = run_fit_rows(fit, {8});
  const std::string text = render_text(run_fit_table(fit, rows));
  EXPECT_NE(text.find(fmt::format("held out on these runs: fitted on those at 2, 3 workers alone, it predicts 4 "
                                  "workers at {:.3f} ms against {:.3f} ms measured ({:+.1f} %)",
                                  1e3 * by_hand, 1e3 * check->measured_s, 100 * check->error())),
            std::string::npos)
      << text;
  const nlohmann::json json = run_fit_json(fit, rows);
  EXPECT_EQ(json["held_out_on_own_runs"]["workers"], 4);
  EXPECT_NEAR(json["held_out_on_own_runs"]["predicted_step_s"].get<double>(), by_hand, 1e-9);

  // Fitted on two host counts, the output says what a third would add.
  const RunFit two = fit_on_runs({allreduce_run(2), allreduce_run(3)}, nullptr);
  EXPECT_NE(render_text(run_fit_table(two, run_fit_rows(two, {4}))).find("runs at a third host count"),
            std::string::npos);
}

// Repeats that differ only in their delays after the bucket (+1 ms on a run at 2 workers, +2 ms on
// one at 3): every fit takes the delays' mean over its runs and nothing else moves, so the four
// choices of one run per host count lie 0, 0.5, 1 and 1.5 ms above the fit on the first two, at
// every N, and the fit on all four (0.75 ms) lies inside.
TEST(RunFitSureness, RepeatsGiveTheRangeOfTheFitsOnOneRunPerHostCount) {
  const std::vector<FitRun> runs = {allreduce_run(2), delayed(2, 0.001, "2b"), allreduce_run(3),
                                    delayed(3, 0.002, "3b")};
  const std::vector<int> workers = {4, 16};
  const auto ranges = step_ranges_over_repeats(runs, nullptr, workers);
  ASSERT_EQ(ranges.size(), workers.size());
  const RunFit first = fit_on_runs({runs[0], runs[2]}, nullptr);
  const RunFit all = fit_on_runs(runs, nullptr);
  for (size_t i = 0; i < workers.size(); ++i) {
    ASSERT_TRUE(ranges[i].has_value()) << workers[i];
    const double base = predict_from_runs(first, workers[i]).step.step_s;
    EXPECT_EQ(ranges[i]->fits, 4);
    EXPECT_NEAR(ranges[i]->low_s, base, 1e-9) << workers[i];
    EXPECT_NEAR(ranges[i]->high_s, base + 0.0015, 1e-9) << workers[i];
    EXPECT_NEAR(predict_from_runs(all, workers[i]).step.step_s, base + 0.00075, 1e-9) << workers[i];
  }

  // The table and predict.json carry it; one run per host count has nothing to range over.
  const std::vector<RunFitRow> rows = run_fit_rows(all, workers, ranges);
  const ReportTable table = run_fit_table(all, rows);
  ASSERT_EQ(table.header[2], "one run per size");
  const double base4 = predict_from_runs(first, 4).step.step_s;
  EXPECT_EQ(table.rows[0][2], fmt::format("{:.3f} - {:.3f}", 1e3 * base4, 1e3 * (base4 + 0.0015)));
  EXPECT_NE(table.note.find("each of 4 choices of one run per host count"), std::string::npos) << table.note;
  const nlohmann::json json = run_fit_json(all, rows);
  EXPECT_NEAR(json["predictions"][1]["step_range_s"][1].get<double>(), ranges[1]->high_s, 1e-12);
  EXPECT_EQ(json["predictions"][0]["step_range_fits"], 4);

  // Workers computing twice as fast: each fit's compute halves, the range as wide (only the delays differ).
  RunFit faster = first;
  divide_compute(faster, 2);
  const auto faster_ranges = step_ranges_over_repeats(runs, nullptr, workers, 2);
  ASSERT_TRUE(faster_ranges[0].has_value());
  EXPECT_NEAR(faster_ranges[0]->low_s, predict_from_runs(faster, 4).step.step_s, 1e-9);
  EXPECT_NEAR(faster_ranges[0]->high_s - faster_ranges[0]->low_s, 0.0015, 1e-9);

  EXPECT_TRUE(step_ranges_over_repeats({runs[0], runs[2]}, nullptr, workers).empty());
  const RunFit single = fit_on_runs({runs[0], runs[2]}, nullptr);
  const ReportTable plain = run_fit_table(single, run_fit_rows(single, workers));
  EXPECT_EQ(std::find(plain.header.begin(), plain.header.end(), "one run per size"), plain.header.end());
  EXPECT_NE(plain.note.find("repeat them to see how far their own spread moves the prediction"), std::string::npos);
}

// Many repeats: the choices fitted are at most kMostRepeatFits, spread over all of them. Nine runs
// at each of 2 and 3 workers, 81 choices; the runs at 3 k ms delayed: the choices sampled evenly
// reach the last of them (the one choices taken in order would leave out), so the range spans
// the delays' means 0 to 4 ms (0 and 8 ms over two runs).
TEST(RunFitSureness, ManyRepeatsAreSampledEvenly) {
  std::vector<FitRun> runs;
  for (int k = 0; k < 9; ++k) {
    runs.push_back(delayed(2, 0.0, "2-" + std::to_string(k)));
    runs.push_back(delayed(3, 0.001 * k, "3-" + std::to_string(k)));
  }
  const auto ranges = step_ranges_over_repeats(runs, nullptr, {4});
  ASSERT_EQ(ranges.size(), 1u);
  ASSERT_TRUE(ranges[0].has_value());
  EXPECT_EQ(ranges[0]->fits, kMostRepeatFits);
  const double base = predict_from_runs(fit_on_runs({runs[0], runs[1]}, nullptr), 4).step.step_s;
  EXPECT_NEAR(ranges[0]->low_s, base, 1e-9);
  EXPECT_NEAR(ranges[0]->high_s, base + 0.004, 1e-9);
}

// Runs the model cannot fit (here whose ranks timed no allreduce bucket) give no range and no
// held-out check, rather than ending the prediction with the error of a subset of them.
TEST(RunFitSureness, RunsThatCannotBeFittedGiveNoCheck) {
  FitRun untimed2 = allreduce_run(2), untimed2b = allreduce_run(2), untimed3 = allreduce_run(3);
  untimed2b.measured.dir = "/runs/2b";
  for (FitRun* run : {&untimed2, &untimed2b, &untimed3}) run->pieces.clear();
  ASSERT_THROW(fit_on_runs({untimed2, untimed3}, nullptr), InputError);
  EXPECT_TRUE(step_ranges_over_repeats({untimed2, untimed2b, untimed3}, nullptr, {4}).empty());
  EXPECT_FALSE(held_out_on_own_runs({untimed2, untimed3, allreduce_run(4)}, nullptr).has_value());
}

}  // namespace
}  // namespace dtbench
