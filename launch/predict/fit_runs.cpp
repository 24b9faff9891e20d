#include "launch/predict/fit_runs.h"

#include <algorithm>
#include <fstream>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/util/error.h"

namespace dtbench {

namespace {

nlohmann::json read_worker_file(const std::filesystem::path& path, int world) {
  if (!std::filesystem::is_regular_file(path)) {
    fail_input("{}: missing; expected one worker-<rank>.json per rank of the run ({} ranks) to fit on", path.string(),
               world);
  }
  std::ifstream file(path);
  try {
    return nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& e) {
    fail_input("{} is not JSON: {}", path.string(), e.what());
  }
}

// One rank's file: its per-step compute, pieces, arrival wait and step, epochs after the first.
struct RankFigures {
  std::vector<double> samples;
  std::vector<MeasuredPiece> pieces;
  double wait_s = 0.0, step_s = 0.0, transfer_s = 0.0;
};

RankFigures rank_figures(const nlohmann::json& worker, const std::filesystem::path& path) {
  RankFigures r;
  try {
    const nlohmann::json& epochs = worker.at("epochs");
    const size_t first = epochs.size() > 1 ? 1 : 0;
    double steps = 0, wait = 0, step = 0, transfer = 0;
    for (size_t e = first; e < epochs.size(); ++e) {
      if (!epochs[e].contains("step_compute_s")) {
        fail_input("{}: epochs[{}] has no step_compute_s (each step's compute); expected a run written by a dtbench "
                   "that records it: run it again", path.string(), e);
      }
      for (const auto& s : epochs[e].at("step_compute_s")) r.samples.push_back(s.get<double>());
      steps += epochs[e].at("steps").get<double>();
      const nlohmann::json& split = epochs[e].at("comm_split");
      wait += split.at("wait_s").get<double>();
      transfer += split.value("push_s", 0.0) + split.value("pull_s", 0.0);
      step += epochs[e].at("phases").at("step").at("sum_s").get<double>();
    }
    if (r.samples.empty() || !(steps > 0)) fail_input("{}: no steps after the first epoch to fit on", path.string());
    r.wait_s = wait / steps;
    r.transfer_s = transfer / steps;
    r.step_s = step / steps;
    r.pieces = comm_pieces(epochs, first, path);
  } catch (const nlohmann::json::exception& e) {
    fail_input("{}: {}; expected epochs with steps, phases.step.sum_s, comm_split.wait_s, step_compute_s",
               path.string(), e.what());
  }
  return r;
}

// Adds `piece` into the means over `ranks` ranks.
void add_piece(std::vector<MeasuredPiece>& means, const MeasuredPiece& piece, int ranks) {
  auto it = std::find_if(means.begin(), means.end(),
                         [&](const MeasuredPiece& p) { return p.what == piece.what && p.index == piece.index; });
  if (it == means.end()) it = means.insert(means.end(), MeasuredPiece{.what = piece.what, .index = piece.index,
                                                                      .bytes = piece.bytes});
  it->ready_s += piece.ready_s / ranks;
  it->start_s += piece.start_s / ranks;
  it->end_s += piece.end_s / ranks;
}

void check_same(const FitRun& a, const FitRun& b) {
  const auto differ = [&](const char* what, const std::string& x, const std::string& y) {
    fail_input("fit runs {} and {} differ in {} ({} against {}); expected runs of one model, transport and link at "
               "several host counts", a.measured.dir.string(), b.measured.dir.string(), what, x, y);
  };
  if (a.measured.model != b.measured.model) differ("model", a.measured.model, b.measured.model);
  if (a.measured.transport != b.measured.transport) differ("transport", a.measured.transport, b.measured.transport);
  if (a.measured.link != b.measured.link) differ("link", a.measured.link, b.measured.link);
  if (a.measured.workload.bucket_bytes != b.measured.workload.bucket_bytes) {
    differ("gradient buckets", fmt::format("{}", fmt::join(a.measured.workload.bucket_bytes, ",")),
           fmt::format("{}", fmt::join(b.measured.workload.bucket_bytes, ",")));
  }
}

}  // namespace

double wait_inside_last_bucket(const std::vector<MeasuredPiece>& pieces, double arrival_wait_s) {
  const MeasuredPiece* last = nullptr;
  for (const MeasuredPiece& p : pieces) {
    if (p.what == "allreduce bucket" && (last == nullptr || p.index > last->index)) last = &p;
  }
  if (last == nullptr) return 0.0;
  const double slowest_ready_s = last->ready_s + arrival_wait_s;
  if (slowest_ready_s >= last->end_s) return 0.0;
  return std::max(0.0, slowest_ready_s - last->start_s);
}

std::vector<double> waits_from_step_compute(const std::vector<std::vector<double>>& per_rank) {
  if (per_rank.empty()) return {};
  const size_t steps = per_rank.front().size();
  for (const auto& samples : per_rank) {
    if (samples.size() != steps) return {};
  }
  std::vector<double> waits(per_rank.size(), 0.0);
  if (steps == 0) return waits;
  for (size_t i = 0; i < steps; ++i) {
    double slowest = per_rank.front()[i];
    for (const auto& samples : per_rank) slowest = std::max(slowest, samples[i]);
    for (size_t r = 0; r < per_rank.size(); ++r) waits[r] += slowest - per_rank[r][i];
  }
  for (double& wait : waits) wait /= static_cast<double>(steps);
  return waits;
}

FitRun load_fit_run(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir)) fail_input("fit run {}: no such directory", dir.string());
  FitRun run{.measured = load_measured_run(dir)};
  const int world = run.measured.workers;
  if (run.measured.link.empty()) {
    fail_input("{}: report.json names no link (network.cluster.link); expected a run on the emulated cluster, whose "
               "link the prediction is for", (dir / "report.json").string());
  }
  std::vector<RankFigures> ranks;
  for (int rank = 0; rank < world; ++rank) {
    const auto path = dir / fmt::format("worker-{}.json", rank);
    ranks.push_back(rank_figures(read_worker_file(path, world), path));
  }
  // A wait of exactly 0 on every rank of an allreduce is one nobody timed: its step waits for the
  // slowest rank. (The parameter servers' wait is for the servers, and always timed.)
  const auto reduces = [](const RankFigures& r) {
    return std::any_of(r.pieces.begin(), r.pieces.end(), [](const auto& p) { return p.what == "allreduce bucket"; });
  };
  const bool untimed = world > 1 && reduces(ranks.front()) &&
                       std::all_of(ranks.begin(), ranks.end(), [](const auto& r) { return r.wait_s == 0; });
  if (untimed) {
    std::vector<std::vector<double>> per_rank;
    for (const RankFigures& r : ranks) per_rank.push_back(r.samples);
    const std::vector<double> waits = waits_from_step_compute(per_rank);
    for (size_t rank = 0; rank < waits.size(); ++rank) ranks[rank].wait_s = waits[rank];
    run.waits_from_compute = !waits.empty();
  }
  for (const RankFigures& r : ranks) {
    run.compute_samples.insert(run.compute_samples.end(), r.samples.begin(), r.samples.end());
    run.last_bucket_wait_s += wait_inside_last_bucket(r.pieces, r.wait_s) / world;
    run.transfer_s += r.transfer_s / world;
    run.step_s += r.step_s / world;
    for (const MeasuredPiece& p : r.pieces) add_piece(run.pieces, p, world);
  }
  run.mean_compute_s = std::accumulate(run.compute_samples.begin(), run.compute_samples.end(), 0.0) /
                       static_cast<double>(run.compute_samples.size());
  return run;
}

std::vector<FitRun> load_fit_runs(const std::vector<std::filesystem::path>& dirs) {
  if (dirs.empty()) fail_input("predict: no run directories to fit on");
  std::vector<FitRun> runs;
  for (const auto& dir : dirs) {
    runs.push_back(load_fit_run(dir));
    check_same(runs.front(), runs.back());
  }
  return runs;
}

}  // namespace dtbench
