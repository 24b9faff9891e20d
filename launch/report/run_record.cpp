#include "launch/report/run_record.h"

#include <algorithm>
#include <fstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "comm/transport_catalogue.h"
#include "core/util/error.h"
#include "launch/report/run_span.h"

namespace dtbench {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// provenance.engine.name, when the report has one (reports before the pytorch engine have none).
const std::string* provenance_engine(const json& report) {
  const auto provenance = report.find("provenance");
  if (provenance == report.end() || !provenance->is_object()) return nullptr;
  const auto engine = provenance->find("engine");
  if (engine == provenance->end() || !engine->is_object()) return nullptr;
  const auto name = engine->find("name");
  return name != engine->end() && name->is_string() ? name->get_ptr<const std::string*>() : nullptr;
}


const json& need(const json& object, std::string_view key, const fs::path& file, std::string_view where) {
  if (!object.is_object() || !object.contains(key)) {
    fail_input("{}: not a dtbench report: missing key '{}{}'", file.string(), where, key);
  }
  return object.at(std::string(key));
}

double number(const json& object, std::string_view key, const fs::path& file, std::string_view where) {
  const json& value = need(object, key, file, where);
  if (!value.is_number()) fail_input("{}: key '{}{}' is not a number", file.string(), where, key);
  return value.get<double>();
}

json parse_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) fail_input("{}: no report (missing or unreadable); is this a run directory?", file.string());
  try {
    return json::parse(in);
  } catch (const json::parse_error& error) {
    fail_input("{}: not valid JSON: {}", file.string(), error.what());
  }
}

// Every field of the comm split, under its report.json key: read, summed and averaged alike.
constexpr std::pair<const char*, double CommRecord::*> kCommFields[] = {
    {"comm_s", &CommRecord::comm_s},         {"comm_total_s", &CommRecord::comm_total_s},
    {"wait_s", &CommRecord::wait_s},         {"transfer_s", &CommRecord::transfer_s},
    {"push_s", &CommRecord::push_s},         {"pull_s", &CommRecord::pull_s},
    {"d2h_s", &CommRecord::d2h_s},           {"h2d_s", &CommRecord::h2d_s},
    {"bytes_sent", &CommRecord::bytes_sent}, {"bytes_received", &CommRecord::bytes_received}};

// Reports written before a field was recorded lack it; the comm split reads as zeros there.
CommRecord comm_record(const json& split) {
  CommRecord c;
  if (!split.is_object()) return c;
  for (const auto& [key, field] : kCommFields) c.*field = split.value(key, 0.0);
  return c;
}

EpochRecord epoch_record(const json& e, const fs::path& file, size_t index) {
  const std::string where = fmt::format("epochs[{}].", index);
  EpochRecord r;
  r.epoch = static_cast<int>(number(e, "epoch", file, where));
  r.steps = static_cast<int64_t>(number(e, "steps", file, where));
  const json& phases = need(e, "phases", file, where);
  for (size_t k = 0; k < kReportPhaseCount; ++k) {
    const std::string at = fmt::format("{}phases.{}.", where, kReportPhases[k]);
    const json& p = need(phases, kReportPhases[k], file, where + "phases.");
    r.phases[k] = {number(p, "sum_s", file, at), number(p, "mean_s", file, at), number(p, "median_s", file, at),
                   number(p, "p95_s", file, at)};
  }
  r.train_seconds = e.value("train_seconds", 0.0);
  r.wall_seconds = e.value("wall_seconds", 0.0);
  r.images_per_second = e.value("images_per_second", 0.0);
  r.train_loss = e.value("train_loss", 0.0);
  r.train_accuracy = e.value("train_accuracy", 0.0);
  r.test_loss = number(e, "test_loss", file, where);
  r.test_accuracy = number(e, "test_accuracy", file, where);
  r.comm = comm_record(e.value("comm_split", json()));
  return r;
}

std::vector<EpochRecord> epoch_records(const json& report, const fs::path& file) {
  const json& epochs = need(report, "epochs", file, "");
  if (!epochs.is_array()) fail_input("{}: key 'epochs' is not an array", file.string());
  std::vector<EpochRecord> records;
  for (size_t i = 0; i < epochs.size(); ++i) records.push_back(epoch_record(epochs[i], file, i));
  return records;
}

// `reports` receives each worker's file as read (all of them, or none when one is missing).
void read_workers(const json& workers, const fs::path& file, RunRecord& run, std::vector<json>& reports) {
  for (const json& w : need(workers, "per_worker", file, "workers.")) {
    WorkerMeans means;
    means.rank = static_cast<int>(number(w, "rank", file, "workers.per_worker[]."));
    const json& phases = need(w, "mean_step_phases_s", file, "workers.per_worker[].");
    for (size_t k = 0; k < kReportPhaseCount; ++k) {
      means.mean_s[k] = number(phases, kReportPhases[k], file, "workers.per_worker[].mean_step_phases_s.");
    }
    means.comm = comm_record(w);
    run.workers.push_back(means);
  }
  run.slowest_worker = workers.value("slowest_worker", -1);
  std::vector<std::string> worker_hosts;
  // Each worker's own per-epoch statistics and resources, when its file sits beside report.json:
  // all of them or none (per-worker tables index them by position), and a warning for a gap — on
  // hosts without a shared file system the other hosts' ranks write theirs elsewhere.
  for (const WorkerMeans& w : run.workers) {
    const fs::path worker_file = file.parent_path() / fmt::format("worker-{}.json", w.rank);
    if (!fs::exists(worker_file)) {
      spdlog::warn("{} is missing: per-worker epochs and resources are left out (rank 0's are shown)",
                   worker_file.string());
      run.worker_epochs.clear();
      run.resources.clear();
      reports.clear();
      return;
    }
    const json& report = reports.emplace_back(parse_file(worker_file));
    run.worker_epochs.push_back(epoch_records(report, worker_file));
    const RunContext worker = run_context(report);
    worker_hosts.push_back(worker.hosts.empty() ? std::string() : worker.hosts.front());
    if (auto resources = resource_record(report, w.rank, worker_file)) run.resources.push_back(*resources);
  }
  // Every worker's host known: they tell how many workers shared a machine.
  if (std::none_of(worker_hosts.begin(), worker_hosts.end(), [](const std::string& h) { return h.empty(); })) {
    run.context.hosts = std::move(worker_hosts);
  }
}

}  // namespace

double run_images_per_second(const json& report) {
  if (const auto span = read_run_span(report)) return span->images_per_second;
  double sum = 0.0;
  if (report.contains("workers") && report["workers"].contains("per_worker")) {
    for (const json& w : report["workers"]["per_worker"]) sum += w.value("images_per_second", 0.0);
  }
  if (sum > 0) return sum;
  if (!report.contains("summary") || !report["summary"].is_object()) return 0.0;
  return report["summary"].value("images_per_second", 0.0) * report.value("world", 1);
}

double run_seconds(const json& report) {
  if (const auto span = read_run_span(report)) return span->seconds;
  return report.value("wall_seconds", 0.0);
}

namespace {

// The run's time and throughput by run_span.h's rule: from the workers' own files where all of
// them are here (the figures anyone can recompute), else from what report.json says.
void set_run_figures(const json& report, const std::vector<json>& worker_reports, RunRecord& run) {
  const bool all_workers = !worker_reports.empty() && static_cast<int>(worker_reports.size()) == run.world;
  const std::optional<RunSpan> span = all_workers ? run_span(worker_reports)
                                                  : run.world == 1 ? run_span({report}) : std::nullopt;
  run.images_per_second = span ? span->images_per_second : run_images_per_second(report);
  run.wall_seconds = span ? span->seconds : run_seconds(report);
}

RunRecord read_run(const fs::path& run_dir) {
  RunRecord run;
  run.path = run_dir / "report.json";
  const json report = parse_file(run.path);
  if (!report.is_object()) fail_input("{}: not a dtbench report (not a JSON object)", run.path.string());
  const fs::path dir = run_dir.lexically_normal();
  run.name = dir.has_filename() ? dir.filename().string() : dir.parent_path().filename().string();
  if (run.name.empty() || run.name == ".") run.name = fs::absolute(run_dir).lexically_normal().parent_path().filename().string();
  const json& status = need(report, "status", run.path, "");
  if (!status.is_string()) fail_input("{}: key 'status' is not a string", run.path.string());
  run.status = status.get<std::string>();
  run.error = report.value("error", std::string());
  run.transport = report.value("transport", std::string(kLocalTransport));
  if (const auto* engine = provenance_engine(report); engine != nullptr) run.engine = *engine;
  run.world = report.value("world", 1);
  run.epochs = epoch_records(report, run.path);
  run.context = run_context(report);
  std::vector<json> worker_reports;
  if (report.contains("workers")) read_workers(report["workers"], run.path, run, worker_reports);
  set_run_figures(report, worker_reports, run);
  if (run.resources.empty()) {
    // Rank 0's own, from report.json, when the workers' files are not there.
    if (auto resources = resource_record(report, report.value("rank", 0), run.path)) {
      run.resources.push_back(*resources);
    }
  }
  return run;
}

}  // namespace

RunRecord load_run(const fs::path& run_dir) {
  try {
    return read_run(run_dir);
  } catch (const json::exception& error) {
    // A key of the wrong type (a number where text belongs, say) that no check above named.
    fail_input("{}: {}", (run_dir / "report.json").string(), error.what());
  }
}

std::array<double, kReportPhaseCount> mean_phases(const std::vector<EpochRecord>& epochs, size_t first) {
  std::array<double, kReportPhaseCount> mean{};
  int64_t steps = 0;
  for (size_t i = first; i < epochs.size(); ++i) {
    for (size_t k = 0; k < kReportPhaseCount; ++k) mean[k] += epochs[i].phases[k].sum_s;
    steps += epochs[i].steps;
  }
  if (steps > 0) {
    for (double& m : mean) m /= static_cast<double>(steps);
  }
  return mean;
}

CommRecord mean_comm(const std::vector<EpochRecord>& epochs, size_t first) {
  CommRecord mean;
  int64_t steps = 0;
  for (size_t i = first; i < epochs.size(); ++i) {
    for (const auto& [key, field] : kCommFields) mean.*field += epochs[i].comm.*field;
    steps += epochs[i].steps;
  }
  if (steps == 0) return {};
  for (const auto& [key, field] : kCommFields) mean.*field /= static_cast<double>(steps);
  return mean;
}

}  // namespace dtbench
