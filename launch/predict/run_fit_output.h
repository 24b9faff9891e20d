#pragma once
// What `dtbench predict --fit RUN_DIR...` prints and writes: the prediction per worker count (the
// step and its terms: mean compute, the slowest of N's lead, communication) with how each term was
// fitted, as a table and as predict.json (the same "predictions" rows as the grid's predict.json);
// where the runs were repeated, beside each step the range of the fits on one run per host count
// (run_fit_sureness.h).
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/predict/run_fit.h"
#include "launch/predict/run_fit_sureness.h"
#include "launch/report/table.h"

namespace dtbench {

struct RunFitRow {
  int workers = 1;
  RunFitStep predicted{};
  std::optional<StepRange> step_range{};
};

// `ranges`: step_ranges_over_repeats' for the same `workers`, or empty.
std::vector<RunFitRow> run_fit_rows(const RunFit& fit, const std::vector<int>& workers,
                                    const std::vector<std::optional<StepRange>>& ranges = {});
ReportTable run_fit_table(const RunFit& fit, const std::vector<RunFitRow>& rows);
nlohmann::json run_fit_json(const RunFit& fit, const std::vector<RunFitRow>& rows);
// predict.json in `dir` (made if missing).
void write_run_fit(const RunFit& fit, const std::vector<RunFitRow>& rows, const std::filesystem::path& dir);

}  // namespace dtbench
