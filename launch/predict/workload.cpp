#include "launch/predict/workload.h"

#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/models/models.h"
#include "core/util/error.h"
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

}  // namespace

std::vector<int64_t> gradient_buckets(const std::string& model, const std::vector<int64_t>& input, int64_t classes,
                                      int64_t bucket_bytes) {
  const auto built = models::build(model, input, classes);
  const int64_t total = built->arena().count() * static_cast<int64_t>(sizeof(float));
  if (bucket_bytes <= 0) return {total};
  std::vector<int64_t> buckets;
  for (const ArenaRange& range : built->arena().buckets(bucket_bytes)) {
    buckets.push_back(range.count * static_cast<int64_t>(sizeof(float)));
  }
  return buckets;
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
  // A blueprint that leaves comm: out runs with the defaults (README, "Several workers").
  const nlohmann::json comm = key<nlohmann::json>(report, "/blueprint", record.path).value("comm", nlohmann::json::object());
  const double bucket_mb = comm.contains("bucket_mb") ? key<double>(report, "/blueprint/comm/bucket_mb", record.path)
                                                      : kDefaultBucketMb;
  const bool overlap = comm.contains("overlap") ? key<bool>(report, "/blueprint/comm/overlap", record.path)
                                                : kDefaultOverlap;
  run.workload.overlap = overlap && bucket_mb > 0;
  run.workload.bucket_bytes = gradient_buckets(run.model, input, classes, static_cast<int64_t>(bucket_mb * (1 << 20)));
  for (int64_t bucket : run.workload.bucket_bytes) run.workload.gradient_bytes += bucket;

  const size_t first = record.epochs.size() > 1 ? 1 : 0;
  const auto phases = mean_phases(record.epochs, first);  // means: the phases sum to the step
  run.workload.compute = {.load_s = phases[0], .forward_s = phases[1], .backward_s = phases[2],
                          .update_s = phases[4], .other_s = phases[5]};
  run.measured_comm_s = phases[3];
  run.measured_step_s = phases[kStepIndex];
  run.servers = load_server_costs(run_dir);
  run.source = fmt::format("{} ({}, {} worker(s), {}, epochs {}-{}, means per step)", record.path.string(),
                           run.model, run.workers, run.transport, first + 1, record.epochs.size());
  return run;
}

}  // namespace dtbench
