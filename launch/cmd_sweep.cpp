// dtbench sweep: runs every configuration of a sweep blueprint (sweep_plan.h) the given number of
// times, each run launched as a user would launch it (sweep_runner.h), and writes the statistics
// (sweep_results.h) and a breakdown report over one representative run per configuration.
//
// Resumable: <output>/<name>/<configuration>/rep-<k> that finished (complete, or stopped at the
// cap) are kept and skipped when the sweep is started again; a failed or interrupted one is moved
// aside to <dir>.attempt-<n> (kept, never overwritten) and run again.
#include <algorithm>
#include <csignal>
#include <fstream>
#include <functional>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/child_process.h"
#include "launch/commands.h"
#include "launch/run_directory.h"
#include "launch/sweep_results.h"

namespace dtbench {

namespace {

namespace fs = std::filesystem;

volatile std::sig_atomic_t sweep_stop_signal = 0;
void request_sweep_stop(int signal) { sweep_stop_signal = signal; }

struct SweepOptions {
  std::string file;
  std::vector<std::string> overrides;
  std::string output;
  std::optional<int64_t> repetitions;  // unset: the sweep's
  std::optional<int64_t> warmup;
  std::optional<double> cap_s;
  bool dry_run = false;
  bool report = true;
};

// A configuration's directory remembers what it was run with; resuming with other settings
// under the same name would mix two experiments in one table.
void check_or_record_settings(const fs::path& dir, const SweepConfiguration& c) {
  nlohmann::json settings = {{"id", c.id}, {"base", c.base.string()}, {"overrides", c.overrides},
                             {"workers", c.workers}, {"servers", c.servers}};
  const fs::path file = dir / "configuration.json";
  if (fs::exists(file)) {
    const nlohmann::json recorded = nlohmann::json::parse(read_file(file).value_or(""), nullptr, false);
    if (recorded.is_discarded()) {
      fail_input("{}: unreadable or not valid JSON; it records what the runs beside it were made with. Move "
                 "that directory away, or choose another --output",
                 file.string());
    }
    if (recorded != settings) {
      fail_input("{} holds runs of configuration {} made with other settings ({}); now: {}. Choose another --output "
                 "or move that directory away",
                 dir.string(), c.id, recorded.dump(), settings.dump());
    }
    return;
  }
  fs::create_directories(dir);
  write_file_atomically(file, settings.dump(2) + "\n");
}

// The run kept from an earlier start of the sweep, if it finished; otherwise its directory is
// moved aside so the run can be made again.
std::optional<SweepRun> kept_run(const fs::path& dir) {
  if (!fs::exists(dir)) return std::nullopt;
  const fs::path record = dir / "run.json";
  if (fs::exists(record)) {
    std::ifstream in(record);
    const nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
    try {
      SweepRun run = sweep_run_from_json(json, dir);
      if (run.final()) return run;
    } catch (const nlohmann::json::exception& error) {
      spdlog::warn("{}: unreadable ({}); the run is made again", record.string(), error.what());
    }
  }
  for (int attempt = 1;; ++attempt) {
    const fs::path aside = dir.string() + fmt::format(".attempt-{}", attempt);
    if (fs::exists(aside)) continue;
    fs::rename(dir, aside);
    spdlog::info("{}: an unfinished earlier attempt, kept as {}", dir.string(), aside.string());
    return std::nullopt;
  }
}

// Written beside the final path and renamed into place, so a synthesis that is interrupted never
// leaves a half-written data set that a later start would take for a whole one.
void synthesize_data(const SweepSynthesis& s, const fs::path& sweep_dir, const std::function<bool()>& interrupted) {
  if (fs::exists(s.path)) return;
  spdlog::info("writing synthetic {} data to {} ({} train / {} test samples)", s.format, s.path, s.train, s.test);
  const fs::path partial = fs::path(s.path).lexically_normal().string() + ".partial";
  fs::remove_all(partial);
  ChildProcess synth({dtbench_executable().string(), "data", "synth", "--format", s.format, "--out", partial.string(),
                      "--train", std::to_string(s.train), "--test", std::to_string(s.test)},
                     sweep_dir / "synthesize.log");
  const auto status = synth.wait_until(ChildProcess::Clock::time_point::max(), interrupted);
  if (!status) synth.terminate(1.0);
  if (!status || *status != 0) {
    fs::remove_all(partial);
    throw IoError(fmt::format("dtbench data synth into {} {}; see {}", s.path, status ? "failed" : "was interrupted",
                              (sweep_dir / "synthesize.log").string()));
  }
  fs::rename(partial, s.path);
}

// One measured run per configuration for the breakdown report: the one with the median run time.
std::vector<fs::path> representative_runs(const SweepResults& results) {
  std::vector<fs::path> dirs;
  for (const auto& r : results.configurations) {
    std::vector<std::pair<double, fs::path>> finished;
    for (size_t i = 0; i < r.runs.size(); ++i) {
      const auto run_s = r.metrics[i].find("run_s");
      if (r.runs[i].warmup || r.runs[i].status != "complete" || run_s == r.metrics[i].end()) continue;
      finished.emplace_back(run_s->second, r.runs[i].dir);
    }
    if (finished.empty()) continue;
    std::sort(finished.begin(), finished.end());
    dirs.push_back(finished[(finished.size() - 1) / 2].second);
  }
  return dirs;
}

void write_breakdown_report(const SweepResults& results, const fs::path& sweep_dir,
                            const std::function<bool()>& interrupted) {
  const std::vector<fs::path> dirs = representative_runs(results);
  if (dirs.empty()) return;
  std::vector<std::string> argv = {dtbench_executable().string(), "report"};
  for (const auto& dir : dirs) argv.push_back(dir.string());
  argv.insert(argv.end(), {"--out", (sweep_dir / "report").string()});
  ChildProcess report(argv, sweep_dir / "report.log");
  const auto status = report.wait_until(ChildProcess::Clock::now() + std::chrono::minutes(5), interrupted);
  if (!status || *status != 0) {
    report.terminate(1.0);
    spdlog::warn("the breakdown report failed; see {}", (sweep_dir / "report.log").string());
    return;
  }
  fmt::print("breakdown report (one median run per configuration): {}\n", (sweep_dir / "report" / "report.html").string());
}

void run_sweep(const SweepOptions& options) {
  SweepBlueprint sweep = load_sweep(options.file, options.overrides);
  if (!options.output.empty()) sweep.output = options.output;
  if (options.repetitions) sweep.repetitions = *options.repetitions;
  if (options.warmup) sweep.warmup = *options.warmup;
  if (options.cap_s) sweep.cap_s = *options.cap_s;
  const std::vector<SweepConfiguration> configurations = expand_sweep(sweep);
  const fs::path sweep_dir = fs::path(sweep.output) / sweep.name;
  const int64_t runs_per_configuration = sweep.warmup + sweep.repetitions;

  fmt::print("sweep {}: {} configuration(s) x ({} warm-up + {} measured) run(s), cap {:g} s -> {}\n", sweep.name,
             configurations.size(), sweep.warmup, sweep.repetitions, sweep.cap_s, sweep_dir.string());
  if (options.dry_run) {
    for (const auto& c : configurations) {
      fmt::print("  {}: {}\n", c.id, c.missing.empty() ? fmt::format("{} worker(s), transport {}", c.workers, c.transport)
                                                        : "missing: " + c.missing);
    }
    return;
  }
  const bool any_servers = std::any_of(configurations.begin(), configurations.end(),
                                       [](const SweepConfiguration& c) { return c.needs_servers() && c.missing.empty(); });
  if (any_servers && !sweep.launch.hostfile.empty() && sweep.launch.ps_host.starts_with("127.")) {
    spdlog::warn("workers start on the hosts of {}, but parameter servers listen on {} (loopback): set launch.ps_host "
                 "to an address of this host that the others can reach",
                 sweep.launch.hostfile, sweep.launch.ps_host);
  }
  fs::create_directories(sweep_dir);
  spdlog::info("runs use {}", dtbench_executable().string());
  adopt_orphaned_descendants();  // a rank whose mpirun was killed is still ours to stop
  std::signal(SIGINT, request_sweep_stop);
  std::signal(SIGTERM, request_sweep_stop);
  const std::function<bool()> interrupted = [] { return sweep_stop_signal != 0; };
  for (const auto& synthesis : sweep.synthesize) synthesize_data(synthesis, sweep_dir, interrupted);
  std::vector<ConfigurationResult> collected;
  const size_t total = configurations.size() * static_cast<size_t>(runs_per_configuration);
  size_t done = 0, skipped = 0, ran = 0;
  for (const auto& c : configurations) {
    ConfigurationResult result;
    result.configuration = c;
    if (c.missing.empty()) {
      const fs::path dir = sweep_dir / c.id;
      check_or_record_settings(dir, c);
      for (int64_t k = 0; k < runs_per_configuration && !interrupted(); ++k) {
        const bool warmup = k < sweep.warmup;
        const int64_t repetition = warmup ? k + 1 : k - sweep.warmup + 1;
        const fs::path run_dir = dir / fmt::format("{}-{}", warmup ? "warmup" : "rep", repetition);
        ++done;
        if (auto kept = kept_run(run_dir)) {
          ++skipped;
          result.runs.push_back(*kept);
          continue;
        }
        SweepRun run = run_repetition(sweep, c, run_dir, repetition, warmup, interrupted);
        ++ran;
        fmt::print("[{}/{}] {} {} {}: {} in {:.1f} s{}\n", done, total, c.id, warmup ? "warm-up" : "repetition",
                   repetition, run.status, run.process_seconds, run.error.empty() ? "" : " — " + run.error);
        std::fflush(stdout);
        result.runs.push_back(std::move(run));
      }
    } else {
      done += static_cast<size_t>(runs_per_configuration);
      fmt::print("{}: missing — {}\n", c.id, c.missing);
    }
    collected.push_back(std::move(result));
    if (interrupted()) break;
  }

  const SweepResults results = summarize_sweep(sweep, collected);
  write_sweep_results(sweep, results, sweep_dir);
  fmt::print("\n{} run(s) made, {} kept from an earlier start\n", ran, skipped);
  for (const auto& table : sweep_tables(sweep, results)) fmt::print("\n{}", render_text(table));
  fmt::print("\nresults: {}, {}, {}\n", (sweep_dir / "results.csv").string(), (sweep_dir / "results.json").string(),
             (sweep_dir / "results.md").string());
  if (interrupted()) {
    throw std::runtime_error(fmt::format("sweep interrupted by signal {}; start it again to resume where it stopped",
                                         static_cast<int>(sweep_stop_signal)));
  }
  if (options.report) write_breakdown_report(results, sweep_dir, interrupted);
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto* command = app.add_subcommand("sweep", "Run a sweep blueprint: every configuration, repeated, with statistics");
  auto options = std::make_shared<SweepOptions>();
  command->add_option("file", options->file, "Sweep blueprint YAML (configs/sweeps/...)")->required();
  command->add_option("--set", options->overrides, "Blueprint key for every run: --set steps=20");
  command->add_option("--output", options->output, "Directory that holds the sweep's directory (default: its output)");
  command->add_option("--repetitions", options->repetitions, "Measured runs per configuration (default: the sweep's)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  command->add_option("--warmup", options->warmup, "Warm-up runs per configuration (default: the sweep's)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000}));
  command->add_option("--cap-s", options->cap_s, "Wall-clock cap per run in seconds (default: the sweep's)")
      ->check(CLI::Range(1e-3, kLongestCapSeconds));
  command->add_flag("--dry-run", options->dry_run, "List the configurations and what is missing; run nothing");
  command->add_flag("!--no-report", options->report, "Skip the breakdown report over the runs");
  command->callback([options] { run_sweep(*options); });
}

}  // namespace dtbench
