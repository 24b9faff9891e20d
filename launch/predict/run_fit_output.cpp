#include "launch/predict/run_fit_output.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/util/files.h"
#include "launch/report/format.h"

namespace dtbench {

std::vector<RunFitRow> run_fit_rows(const RunFit& fit, const std::vector<int>& workers,
                                    const std::vector<std::optional<StepRange>>& ranges) {
  std::vector<RunFitRow> rows;
  for (size_t i = 0; i < workers.size(); ++i) {
    rows.push_back({.workers = workers[i], .predicted = predict_from_runs(fit, workers[i]),
                    .step_range = i < ranges.size() ? ranges[i] : std::nullopt});
  }
  return rows;
}

namespace {

std::string range_text(const std::optional<StepRange>& range) {
  return range ? fmt::format("{} - {}", ms_text(range->low_s), ms_text(range->high_s)) : "-";
}

// What the range column is, or how to get one.
std::string range_note(const RunFit& fit, const std::vector<RunFitRow>& rows) {
  int fits = 0;
  for (const RunFitRow& r : rows) fits = std::max(fits, r.step_range ? r.step_range->fits : 0);
  if (fits == 0) {
    return fit.fit_runs.size() > fit.fit_workers.size()
               ? ""
               : "one run at each host count: repeat them to see how far their own spread moves the prediction";
  }
  return fmt::format("one run per size: the step fitted again on each of {} choices of one run per host count "
                     "among the repeats, lowest - highest: how far the runs' own spread moves the prediction, a floor "
                     "on how unsure it is (the model's own error comes on top)", fits);
}

}  // namespace

ReportTable run_fit_table(const RunFit& fit, const std::vector<RunFitRow>& rows) {
  ReportTable table = titled_table(
      fmt::format("{} {} at {}, fitted on runs at {} workers{} (per step, ms)", fit.model,
                  transport_name(fit.transport), fit.link, fmt::join(fit.fit_workers, ", "),
                  fit.compute_speedup != 1 ? fmt::format(", computing {:g} times as fast", fit.compute_speedup) : ""),
      {"workers", "step", "compute (mean)", "slowest of N", "comm exposed", "comm total"});
  const bool ranged = std::any_of(rows.begin(), rows.end(), [](const RunFitRow& r) { return r.step_range.has_value(); });
  if (ranged) table.header.insert(table.header.begin() + 2, "one run per size");
  // MPI_Allreduce's time at N is that of the algorithm Open MPI takes there: say which.
  const bool mpi = fit.transport == PredictTransport::Mpi;
  if (mpi) table.header.push_back("Open MPI's allreduce");
  for (const RunFitRow& r : rows) {
    const StepPrediction& s = r.predicted.step;
    table.rows.push_back({std::to_string(r.workers), ms_text(s.step_s), ms_text(s.compute_s),
                          ms_text(r.predicted.straggler_s), ms_text(s.comm_exposed_s), ms_text(s.comm_total_s)});
    if (ranged) table.rows.back().insert(table.rows.back().begin() + 2, range_text(r.step_range));
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
  if (fit.held_out) {
    const HeldOutCheck& h = *fit.held_out;
    table.note += fmt::format("\nheld out on these runs: fitted on those at {} workers alone, it predicts {} workers "
                              "at {} ms against {} ms measured ({:+.1f} %)", fmt::join(h.fitted_on, ", "), h.workers,
                              ms_text(h.predicted_s), ms_text(h.measured_s), 100 * h.error());
  } else if (fit.fit_workers.size() == 2) {
    table.note += "\nruns at a third host count would check the fit on them held out (the largest predicted from "
                  "the others)";
  } else {
    // Held out on the emulated cluster, one host count and its benches missed by the most: the
    // benches' growth in N is not training's (LeNet-5's parameter servers, docs/predict.md).
    table.note += "\nfrom runs at one host count, how the communication grows with N is the benches' model scaled "
                  "to them: runs at a second host count would fit it on training itself, and held out that "
                  "predicts closer (docs/predict.md)";
  }
  if (const std::string note = range_note(fit, rows); !note.empty()) table.note += "\n" + note;
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
    if (r.step_range) {
      predictions.back()["step_range_s"] = {r.step_range->low_s, r.step_range->high_s};
      predictions.back()["step_range_fits"] = r.step_range->fits;
    }
    if (fit.transport == PredictTransport::Mpi && r.workers > 1) {
      predictions.back()["mpi_algorithms"] = mpi_algorithms_text(fit.workload.bucket_bytes, r.workers);
    }
  }
  nlohmann::json own_runs = nlohmann::json::array();
  for (const OwnRunCheck& c : fit.own_runs) {
    own_runs.push_back({{"workers", c.workers}, {"measured_step_s", c.measured_s}, {"fitted_step_s", c.fitted_s}});
  }
  nlohmann::json held_out = nullptr;
  if (fit.held_out) {
    held_out = {{"fitted_on_workers", fit.held_out->fitted_on}, {"workers", fit.held_out->workers},
                {"measured_step_s", fit.held_out->measured_s}, {"predicted_step_s", fit.held_out->predicted_s}};
  }
  return {{"fitted_on_runs", fit.fit_runs}, {"held_out_on_own_runs", held_out}, {"fit_workers", fit.fit_workers},
          {"own_runs", own_runs}, {"model", fit.model}, {"transport", transport_name(fit.transport)},
          {"link", fit.link}, {"terms", fit.notes}, {"compute_samples", fit.compute_samples.size()},
          {"mean_compute_s", fit.mean_compute_s}, {"compute_speedup", fit.compute_speedup},
          {"predictions", predictions}};
}

void write_run_fit(const RunFit& fit, const std::vector<RunFitRow>& rows, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "predict.json", run_fit_json(fit, rows).dump(2) + "\n");
}

}  // namespace dtbench
