#include "launch/predict/workload.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/models/models.h"
#include "core/util/error.h"
#include "launch/report/run_context.h"
#include "launch/report/run_record.h"

namespace dtbench {

namespace {

constexpr double kDefaultBucketMb = 25;
constexpr bool kDefaultOverlap = true;

template <typename T>
T key(const nlohmann::json& j, const char* path, const std::filesystem::path& file) {
  try {
    return j.at(nlohmann::json::json_pointer(path)).get<T>();
  } catch (const nlohmann::json::exception& e) {
    fail_input("{}: key {} missing or of the wrong type: {}", file.string(), path, e.what());
  }
}

// Per parameter (arena order), the share of backward's work done once its gradient is final: the
// multiply-adds of its layer and of every layer after it, over all of them. Empty when the model
// counts none.
std::vector<double> backward_done_at(const Model& model) {
  const std::vector<LayerInfo>& layers = model.layers();
  std::vector<double> from(layers.size() + 1, 0.0);  // from[i]: the multiply-adds of layers i..end
  for (size_t i = layers.size(); i-- > 0;) from[i] = from[i + 1] + static_cast<double>(layers[i].macs_per_sample);
  if (!(from[0] > 0)) return {};
  std::vector<double> done;
  size_t layer = 0;
  int64_t taken = 0;  // of the current layer's parameters
  for (const Param* param : model.arena().params()) {
    while (layer < layers.size() && taken >= layers[layer].parameters) ++layer, taken = 0;
    done.push_back(from[std::min(layer, layers.size() - 1)] / from[0]);
    taken += param->numel();
  }
  return done;
}

// How much longer the slowest worker computed per step than the one whose report this is (the
// workers' means over the same epochs); 0 for a run of one worker.
double straggler_seconds(const RunRecord& record, double own_compute) {
  double slowest = own_compute;
  for (const WorkerMeans& worker : record.workers) {
    double compute = 0;
    for (int phase : {0, 1, 2, 4, 5}) compute += worker.mean_s[static_cast<size_t>(phase)];  // all but comm
    slowest = std::max(slowest, compute);
  }
  return slowest - own_compute;
}

}  // namespace

std::vector<MeasuredPiece> comm_pieces(const nlohmann::json& epochs, size_t first, const std::filesystem::path& file) {
  std::vector<MeasuredPiece> pieces;
  std::vector<double> steps;
  for (size_t e = first; e < epochs.size(); ++e) {
    for (const auto& timing : epochs[e].value("comm_timings", nlohmann::json::array())) {
      try {
        const std::string what = timing.at("what").get<std::string>();
        const int index = timing.at("index").get<int>();
        auto piece = std::find_if(pieces.begin(), pieces.end(),
                                  [&](const MeasuredPiece& p) { return p.index == index && p.what == what; });
        if (piece == pieces.end()) {
          piece = pieces.insert(pieces.end(), MeasuredPiece{.what = what, .index = index});
          steps.push_back(0);
        }
        const auto n = timing.at("steps").get<double>();
        double& so_far = steps[static_cast<size_t>(piece - pieces.begin())];
        const auto mean_in = [&](double& mean, const char* key) {
          mean = (mean * so_far + timing.at(key).get<double>() * n) / (so_far + n);
        };
        mean_in(piece->ready_s, "ready_s");
        mean_in(piece->start_s, "start_s");
        mean_in(piece->end_s, "end_s");
        piece->bytes = timing.at("bytes").get<int64_t>();
        so_far += n;
      } catch (const nlohmann::json::exception& error) {
        fail_input("{}: epochs[{}].comm_timings: {}; expected what, index, bytes, steps, ready_s, start_s, end_s",
                   file.string(), e, error.what());
      }
    }
  }
  return pieces;
}

namespace {

// The buckets the run sent, where its pieces are a whole set of them (indices 0..K-1, once each)
// holding the model's gradient: PyTorch DDP cuts the same gradient elsewhere than dtbench's arena
// (ResNet-18 at 25 MiB: 28.34 + 16.35 MB against 28.87 + 15.82) and pads it otherwise (AlexNet's
// first bucket 24 bytes short), and its buckets are what crossed the wire. Empty otherwise.
std::vector<int64_t> buckets_sent(const std::vector<MeasuredPiece>& pieces, int64_t gradient_bytes) {
  std::vector<int64_t> bytes;
  for (const MeasuredPiece& p : pieces) {
    if (p.what != "allreduce bucket") continue;
    if (p.index < 0 || p.bytes <= 0) return {};
    const auto k = static_cast<size_t>(p.index);
    if (k >= bytes.size()) bytes.resize(k + 1, 0);
    if (bytes[k] != 0) return {};
    bytes[k] = p.bytes;
  }
  if (std::find(bytes.begin(), bytes.end(), 0) != bytes.end()) return {};
  const int64_t total = std::accumulate(bytes.begin(), bytes.end(), int64_t{0});
  // Padding apart: at most a thousandth of the gradient, or 256 bytes a bucket for a small one.
  const int64_t slack = std::max<int64_t>(gradient_bytes / 1000, 256 * static_cast<int64_t>(bytes.size()));
  return std::llabs(total - gradient_bytes) <= slack ? bytes : std::vector<int64_t>{};
}

// The run's own buckets, in the order backward made them, when they are the model's buckets.
std::vector<double> measured_bucket_ready(const std::vector<MeasuredPiece>& pieces, const Workload& w) {
  std::vector<double> ready;
  for (size_t k = 0; k < w.bucket_bytes.size(); ++k) {
    const auto piece = std::find_if(pieces.begin(), pieces.end(), [&](const MeasuredPiece& p) {
      return p.what == "allreduce bucket" && p.index == static_cast<int>(k);
    });
    if (piece == pieces.end() || piece->bytes != w.bucket_bytes[k] || !(w.compute.backward_s > 0)) return {};
    ready.push_back(std::clamp(piece->ready_s / w.compute.backward_s, 0.0, 1.0));
  }
  return ready;
}

}  // namespace

GradientBuckets gradient_buckets(const std::string& model, const std::vector<int64_t>& input, int64_t classes,
                                 int64_t bucket_bytes) {
  const auto built = models::build(model, input, classes);
  const ParamArena& arena = built->arena();
  const std::vector<double> done = backward_done_at(*built);
  GradientBuckets out;
  const std::vector<ArenaRange> ranges =
      bucket_bytes > 0 ? arena.buckets(bucket_bytes) : std::vector<ArenaRange>{{.offset = 0, .count = arena.count()}};
  for (const ArenaRange& range : ranges) {
    out.bytes.push_back(range.count * static_cast<int64_t>(sizeof(float)));
    // A bucket is complete when its first parameter's gradient is: backward runs back to front.
    for (size_t k = 0; k < arena.params().size() && !done.empty(); ++k) {
      if (arena.params()[k]->offset == range.offset) out.ready.push_back(done[k]);
    }
  }
  if (out.ready.size() != out.bytes.size()) out.ready.clear();  // no multiply-adds to go by: by bytes
  return out;
}

MeasuredRun load_measured_run(const std::filesystem::path& run_dir) {
  const RunRecord record = load_run(run_dir);  // InputError naming the file when it is unusable
  if (record.epochs.empty()) fail_input("{}: no completed epoch to take the compute phases from", record.path.string());
  std::ifstream file(record.path);
  const nlohmann::json report = nlohmann::json::parse(file);

  MeasuredRun run{.dir = run_dir, .transport = record.transport, .workers = record.world};
  run.model = key<std::string>(report, "/model/name", record.path);
  const auto input = key<std::vector<int64_t>>(report, "/model/input", record.path);
  const auto classes = key<int64_t>(report, "/model/classes", record.path);
  // A blueprint that leaves comm: out runs with the defaults (docs/workers.md, the `comm:` keys).
  const nlohmann::json comm = key<nlohmann::json>(report, "/blueprint", record.path).value("comm", nlohmann::json::object());
  const double bucket_mb = comm.contains("bucket_mb") ? key<double>(report, "/blueprint/comm/bucket_mb", record.path)
                                                      : kDefaultBucketMb;
  const bool overlap = comm.contains("overlap") ? key<bool>(report, "/blueprint/comm/overlap", record.path)
                                                : kDefaultOverlap;
  run.workload.overlap = overlap && bucket_mb > 0;
  GradientBuckets buckets = gradient_buckets(run.model, input, classes, static_cast<int64_t>(bucket_mb * (1 << 20)));
  run.workload.bucket_bytes = std::move(buckets.bytes);
  run.workload.bucket_ready = std::move(buckets.ready);
  for (int64_t bucket : run.workload.bucket_bytes) run.workload.gradient_bytes += bucket;

  const size_t first = record.epochs.size() > 1 ? 1 : 0;
  const auto phases = mean_phases(record.epochs, first);  // means: the phases sum to the step
  run.workload.compute = {.load_s = phases[0], .forward_s = phases[1], .backward_s = phases[2],
                          .update_s = phases[4], .other_s = phases[5]};
  run.workload.straggler_s = straggler_seconds(record, run.workload.compute.total());
  run.measured_comm_s = phases[3];
  run.measured_step_s = phases[kStepIndex];
  run.servers = load_server_costs(run_dir);
  run.link = report.value(nlohmann::json::json_pointer("/network/cluster/link"), std::string());
  // Hosts on a fraction of a core, or more than the machine has: every byte crosses its cores.
  if (const RunContext context = run_context(report); context.hosts_share_cores()) {
    run.shared_cores = context.cores;
    run.hosts_time_sliced = context.time_sliced;
    run.host_cores = context.host_cores;
  }
  run.comm_pieces = comm_pieces(report.at("epochs"), first, record.path);
  run.ready_from_macs = run.workload.bucket_ready;
  // Backward's real shape beats multiply-adds standing in for it, at any worker count: when each
  // bucket was ready is the run's compute, not its network.
  if (auto ready = measured_bucket_ready(run.comm_pieces, run.workload); !ready.empty()) {
    run.workload.bucket_ready = std::move(ready);
    run.ready_measured = true;
  }
  run.source = fmt::format("{} ({}, {} worker(s), {}, epochs {}-{}, means per step)", record.path.string(),
                           run.model, run.workers, run.transport, first + 1, record.epochs.size());
  return run;
}

void take_buckets_sent(MeasuredRun& run) {
  std::vector<int64_t> sent = buckets_sent(run.comm_pieces, run.workload.gradient_bytes);
  if (sent.empty() || sent == run.workload.bucket_bytes) return;
  run.workload.bucket_bytes = std::move(sent);
  run.workload.gradient_bytes =
      std::accumulate(run.workload.bucket_bytes.begin(), run.workload.bucket_bytes.end(), int64_t{0});
  // The multiply-adds' estimate was of the arena's buckets: none for these but the run's own.
  run.ready_from_macs.clear();
  run.workload.bucket_ready = measured_bucket_ready(run.comm_pieces, run.workload);
  run.ready_measured = !run.workload.bucket_ready.empty();
}

}  // namespace dtbench
