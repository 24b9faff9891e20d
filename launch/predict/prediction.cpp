#include "launch/predict/prediction.h"

#include <algorithm>
#include <map>

#include "core/util/error.h"

namespace dtbench {

PredictionGrid predict_grid(const MeasuredRun& run, const std::vector<int>& workers, const std::vector<LinkRate>& links,
                            const std::vector<PredictTransport>& transports, const FittedConstants& constants,
                            const ServerLayout& layout) {
  if (workers.empty() || links.empty() || transports.empty()) {
    fail_input("predict needs at least one worker count, link rate and transport");
  }
  PredictionGrid grid{.run = run, .layout = layout};
  const double alone = run.workload.compute.total();
  if (!(alone > 0)) fail_input("{}: the measured compute per step is {} s; expected a positive time", run.source, alone);
  for (const LinkRate& link : links) {
    for (PredictTransport transport : transports) {
      const NetworkConstants c = constants.at(transport, link);
      for (int n : workers) {
        if (n < 1) fail_input("--workers {}: expected worker counts of at least 1", n);
        PredictionRow row{.transport = transport, .link = link.text, .workers = n, .constants = c};
        row.step = predict_step(transport, run.workload, n, layout, c);
        row.speedup = n * alone / row.step.step_s;
        row.efficiency = row.speedup / n;
        row.comm_share = row.step.comm_exposed_s / row.step.step_s;
        grid.rows.push_back(row);
      }
    }
  }
  grid.crossovers = find_crossovers(grid.rows);
  return grid;
}

std::vector<Crossover> find_crossovers(const std::vector<PredictionRow>& rows) {
  // link -> workers -> the fastest row there (links in the order given)
  std::vector<std::string> links;
  std::map<std::string, std::map<int, const PredictionRow*>> fastest;
  for (const PredictionRow& row : rows) {
    if (std::find(links.begin(), links.end(), row.link) == links.end()) links.push_back(row.link);
    const PredictionRow*& best = fastest[row.link][row.workers];
    if (best == nullptr || row.step.step_s < best->step.step_s) best = &row;
  }
  std::vector<Crossover> out;
  for (const std::string& link : links) {
    const PredictionRow* previous = nullptr;
    for (const auto& [n, best] : fastest[link]) {
      if (n == 1) continue;  // one worker alone: no transport at all
      if (previous != nullptr && best->transport != previous->transport) {
        out.push_back({.link = link, .last_workers = previous->workers, .first_workers = n,
                       .from = previous->transport, .to = best->transport});
      }
      previous = best;
    }
  }
  return out;
}

}  // namespace dtbench
