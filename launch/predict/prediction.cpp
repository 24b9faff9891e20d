#include "launch/predict/prediction.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/util/error.h"

namespace dtbench {

namespace {

bool parameter_server(PredictTransport t) { return t == PredictTransport::PsSync || t == PredictTransport::PsAsync; }

// A parameter-server run's own servers measured their summing and update: those, not the bench's
// (whose servers run plain SGD on one flat parameter), are the compute of the servers.
NetworkConstants with_server_costs(NetworkConstants c, PredictTransport transport, const MeasuredRun& run) {
  if (!parameter_server(transport) || !run.servers) return c;
  c.reduce_s_per_byte = run.servers->reduce_s_per_byte;
  c.apply_s_per_byte = run.servers->apply_s_per_byte;
  c.source += "; " + run.servers->source;
  return c;
}

// The shard sizes the run measured hold where the shards are as many as it had.
ServerLayout measured_layout(ServerLayout layout, const MeasuredRun& run, int workers) {
  const int shards = layout.shards > 0 ? layout.shards : workers;
  if (run.servers && run.servers->shards == shards) layout.largest_share = run.servers->largest_share;
  return layout;
}

// The check against the run, for its own transport at its own link, where the grid predicts that
// transport and the run names its link.
std::optional<RunCheck> run_check(const MeasuredRun& run, const std::vector<PredictTransport>& transports,
                                  const FittedConstants& constants, const ServerLayout& layout) {
  if (run.link.empty()) return std::nullopt;
  for (PredictTransport transport : transports) {
    if (transport_name(transport) != run.transport) continue;
    const NetworkConstants c = with_server_costs(constants.at(transport, parse_link_rate(run.link)), transport, run);
    return check_against_run(run, c, measured_layout(layout, run, run.workers));
  }
  return std::nullopt;
}

}  // namespace

PredictionGrid predict_grid(const MeasuredRun& run, const std::vector<int>& workers, const std::vector<LinkRate>& links,
                            const std::vector<PredictTransport>& transports, const FittedConstants& constants,
                            const ServerLayout& layout, bool calibrate) {
  if (workers.empty() || links.empty() || transports.empty()) {
    fail_input("predict needs at least one worker count, link rate and transport");
  }
  PredictionGrid grid{.run = run, .layout = layout};
  grid.check = run_check(run, transports, constants, layout);
  const double run_link_bits = run.link.empty() ? 0 : parse_link_rate(run.link).bits_per_s;
  const double alone = run.workload.compute.total();
  if (!(alone > 0)) fail_input("{}: the measured compute per step is {} s; expected a positive time", run.source, alone);
  for (const LinkRate& link : links) {
    for (PredictTransport transport : transports) {
      NetworkConstants c = with_server_costs(constants.at(transport, link), transport, run);
      if (calibrate && grid.check && grid.check->transport == transport && link.bits_per_s == run_link_bits) {
        c.comm_scale = grid.check->comm_scale;
        c.bucket_shape = grid.check->bucket_shape;
        c.step_overhead_s = grid.check->step_overhead_s;
        c.straggler_in_comm = true;
        c.source += fmt::format("; comm x {:.2f}: the run's own at {} workers (--no-calibrate: the bench alone)",
                                c.comm_scale, run.workers);
        grid.calibrated = true;
      }
      for (int n : workers) {
        if (n < 1) fail_input("--workers {}: expected worker counts of at least 1", n);
        StepPrediction step = predict_step(transport, run.workload, n, measured_layout(layout, run, n), c);
        const double speedup = n * alone / step.step_s, comm_share = step.comm_exposed_s / step.step_s;
        grid.rows.push_back({.transport = transport, .link = link.text, .workers = n, .step = std::move(step),
                             .speedup = speedup, .efficiency = speedup / n, .comm_share = comm_share, .constants = c});
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
