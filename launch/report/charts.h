#pragma once
// Which bars and lines each chart of report.html shows, taken from the runs. A transport keeps one
// colour in every chart of every report (transport_colour); within one run's charts the workers
// take the colours.
#include <string>
#include <vector>

#include "launch/report/run_record.h"

namespace dtbench {

// The series_colour index of a transport: ring, mpi, ps-sync, ps-async, none always the same.
size_t transport_colour(const std::string& transport);

// One run: epoch 1, the later epochs and all together; several: one bar per run.
std::string phases_chart(const std::vector<RunRecord>& runs);
// Per run with several workers, a chart of one bar per worker (page-wide for one run, half for several).
std::vector<std::string> worker_phase_charts(const std::vector<RunRecord>& runs);
// One run: training time per epoch (the first apart); several: total wall time per run.
std::string time_chart(const std::vector<RunRecord>& runs, bool log_scale);
// Test (solid) and training (dashed) accuracy, and loss, per epoch.
std::string accuracy_chart(const std::vector<RunRecord>& runs);
std::string loss_chart(const std::vector<RunRecord>& runs);
// Resource samples a worker needs before its curves are drawn.
inline constexpr size_t kFewestResourceSamples = 3;
// For one run: its workers' process CPU and resident memory over time, and GPU utilisation and
// memory where a GPU was sampled; none for workers with fewer than kFewestResourceSamples samples.
// `title_suffix` names the run when there are several.
std::vector<std::string> resource_charts(const RunRecord& run, const std::string& title_suffix);

}  // namespace dtbench
