#include "launch/predict/run_fit_output.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/util/files.h"
#include "launch/report/format.h"

namespace dtbench {

std::vector<RunFitRow> run_fit_rows(const RunFit& fit, const std::vector<int>& workers) {
  std::vector<RunFitRow> rows;
  for (int n : workers) rows.push_back({.workers = n, .predicted = predict_from_runs(fit, n)});
  return rows;
}

ReportTable run_fit_table(const RunFit& fit, const std::vector<RunFitRow>& rows) {
  ReportTable table = titled_table(
      fmt::format("{} {} at {}, fitted on runs at {} workers (per step, ms)", fit.model, transport_name(fit.transport),
                  fit.link, fmt::join(fit.fit_workers, ", ")),
      {"workers", "step", "compute (mean)", "slowest of N", "comm exposed", "comm total"});
  // MPI_Allreduce's time at N is that of the algorithm Open MPI takes there: say which.
  const bool mpi = fit.transport == PredictTransport::Mpi;
  if (mpi) table.header.push_back("Open MPI's allreduce");
  for (const RunFitRow& r : rows) {
    const StepPrediction& s = r.predicted.step;
    table.rows.push_back({std::to_string(r.workers), ms_text(s.step_s), ms_text(s.compute_s),
                          ms_text(r.predicted.straggler_s), ms_text(s.comm_exposed_s), ms_text(s.comm_total_s)});
    if (mpi) table.rows.back().push_back(r.workers > 1 ? mpi_algorithms_text(fit.workload.bucket_bytes, r.workers) : "-");
  }
  table.note = fmt::format("fitted on {}: {}", fmt::join(fit.fit_runs, ", "), fmt::join(fit.notes, "; "));
  std::vector<std::string> own;
  double worst = 0;
  for (const OwnRunCheck& c : fit.own_runs) {
    own.push_back(fmt::format("{} workers {} ms measured, {} fitted ({:+.1f} %)", c.workers, ms_text(c.measured_s),
                              ms_text(c.fitted_s), 100 * c.error()));
    worst = std::max(worst, std::abs(c.error()));
  }
  if (!own.empty()) table.note += fmt::format("\non its own runs: {}", fmt::join(own, "; "));
  if (worst > kOwnRunTolerance) {
    table.note += fmt::format(
        "\nwarning: the fit misses its own runs by up to {:.1f} %: their steps do not follow its terms in N (on "
        "the emulated cluster, hosts that share the machine's cores unlike at the other host counts do this), so "
        "what it predicts beyond them is less sure",
        100 * worst);
  }
  return table;
}

nlohmann::json run_fit_json(const RunFit& fit, const std::vector<RunFitRow>& rows) {
  nlohmann::json predictions = nlohmann::json::array();
  for (const RunFitRow& r : rows) {
    const StepPrediction& s = r.predicted.step;
    predictions.push_back({{"transport", transport_name(fit.transport)}, {"link", fit.link}, {"workers", r.workers},
                           {"step_s", s.step_s}, {"compute_s", s.compute_s}, {"straggler_s", r.predicted.straggler_s},
                           {"comm_exposed_s", s.comm_exposed_s}, {"comm_total_s", s.comm_total_s},
                           {"staleness", s.staleness}});
    if (fit.transport == PredictTransport::Mpi && r.workers > 1) {
      predictions.back()["mpi_algorithms"] = mpi_algorithms_text(fit.workload.bucket_bytes, r.workers);
    }
  }
  nlohmann::json own_runs = nlohmann::json::array();
  for (const OwnRunCheck& c : fit.own_runs) {
    own_runs.push_back({{"workers", c.workers}, {"measured_step_s", c.measured_s}, {"fitted_step_s", c.fitted_s}});
  }
  return {{"fitted_on_runs", fit.fit_runs}, {"fit_workers", fit.fit_workers}, {"own_runs", own_runs}, {"model", fit.model},
          {"transport", transport_name(fit.transport)}, {"link", fit.link}, {"terms", fit.notes},
          {"compute_samples", fit.compute_samples.size()}, {"predictions", predictions}};
}

void write_run_fit(const RunFit& fit, const std::vector<RunFitRow>& rows, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "predict.json", run_fit_json(fit, rows).dump(2) + "\n");
}

}  // namespace dtbench
