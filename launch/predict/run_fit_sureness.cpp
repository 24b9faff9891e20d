#include "launch/predict/run_fit_sureness.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/util/error.h"

namespace dtbench {

namespace {

// A fit on some of the runs, or none where the model cannot fit them (InputError): such a subset
// says nothing of how sure the fit on all of them is.
std::optional<RunFit> fit_if_possible(const std::vector<FitRun>& runs, const FittedConstants* benches) {
  try {
    return fit_on_runs(runs, benches);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<HeldOutCheck> held_out_on_own_runs(const std::vector<FitRun>& runs, const FittedConstants* benches) {
  std::set<int> host_counts;
  for (const FitRun& run : runs) host_counts.insert(run.measured.workers);
  if (host_counts.size() < 3) return std::nullopt;
  const int largest = *host_counts.rbegin();
  std::vector<FitRun> smaller;
  double measured_sum = 0;
  int measured_count = 0;
  for (const FitRun& run : runs) {
    if (run.measured.workers < largest) {
      smaller.push_back(run);
    } else {
      measured_sum += run.step_s, ++measured_count;
    }
  }
  const std::optional<RunFit> fit = fit_if_possible(smaller, benches);
  if (!fit) return std::nullopt;
  return HeldOutCheck{.fitted_on = fit->fit_workers, .workers = largest, .measured_s = measured_sum / measured_count,
                      .predicted_s = predict_from_runs(*fit, largest).step.step_s};
}

std::vector<std::optional<StepRange>> step_ranges_over_repeats(const std::vector<FitRun>& runs,
                                                               const FittedConstants* benches,
                                                               const std::vector<int>& workers,
                                                               double compute_speedup) {
  std::map<int, std::vector<const FitRun*>> by_host_count;
  for (const FitRun& run : runs) by_host_count[run.measured.workers].push_back(&run);
  int64_t choices = 1;
  for (const auto& [n, repeats] : by_host_count) choices *= static_cast<int64_t>(repeats.size());
  if (choices < 2) return {};
  const int64_t fits = std::min<int64_t>(choices, kMostRepeatFits);
  std::vector<std::optional<StepRange>> ranges(workers.size());
  for (int64_t k = 0; k < fits; ++k) {
    // The k-th of `fits` choices spread evenly over all of them, read as one digit per host count.
    int64_t index = k * choices / fits;
    std::vector<FitRun> chosen;
    for (const auto& [n, repeats] : by_host_count) {
      const auto count = static_cast<int64_t>(repeats.size());
      chosen.push_back(*repeats[static_cast<size_t>(index % count)]);
      index /= count;
    }
    std::optional<RunFit> fit = fit_if_possible(chosen, benches);
    if (!fit) continue;
    divide_compute(*fit, compute_speedup);
    for (size_t i = 0; i < workers.size(); ++i) {
      const double step = predict_from_runs(*fit, workers[i]).step.step_s;
      std::optional<StepRange>& range = ranges[i];
      if (!range) range = StepRange{.low_s = step, .high_s = step};
      range->low_s = std::min(range->low_s, step);
      range->high_s = std::max(range->high_s, step);
      ++range->fits;
    }
  }
  if (std::none_of(ranges.begin(), ranges.end(), [](const auto& r) { return r.has_value(); })) return {};
  return ranges;
}

}  // namespace dtbench
