// dtbench sweep: runs every configuration of a sweep blueprint (plan.h) the given number of
// times, each run launched as a user would launch it (runner.h), resumable (resume.h), and writes
// the statistics (results.h) and a breakdown report over one representative run per configuration.
#include "launch/sweep/sweep.h"

#include <algorithm>
#include <csignal>
#include <functional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/util/error.h"
#include "core/util/files.h"
#include "launch/report/verdict.h"
#include "launch/sweep/child_process.h"
#include "launch/sweep/cluster_lease.h"
#include "launch/sweep/results.h"
#include "launch/sweep/resume.h"

namespace dtbench {

namespace {

namespace fs = std::filesystem;

volatile std::sig_atomic_t sweep_stop_signal = 0;
void request_sweep_stop(int signal) { sweep_stop_signal = signal; }

// What every wait of the sweep polls: SIGINT or SIGTERM arrived.
bool stop_requested() { return sweep_stop_signal != 0; }

// Written beside the final path and renamed into place, so a synthesis that is interrupted never
// leaves a half-written data set that a later start would take for a whole one.
void synthesize_data(const SweepSynthesis& s, const fs::path& sweep_dir) {
  if (fs::exists(s.path)) return;
  spdlog::info("writing synthetic {} data to {} ({} train / {} test samples)", s.format, s.path, s.train, s.test);
  const fs::path partial = fs::path(s.path).lexically_normal().string() + ".partial";
  fs::remove_all(partial);
  ChildProcess synth({dtbench_executable().string(), "data", "synth", "--format", s.format, "--out", partial.string(),
                      "--train", std::to_string(s.train), "--test", std::to_string(s.test)},
                     sweep_dir / "synthesize.log");
  const auto status = synth.wait_until(ChildProcess::Clock::time_point::max(), stop_requested);
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

void write_breakdown_report(const SweepResults& results, const fs::path& sweep_dir) {
  const std::vector<fs::path> dirs = representative_runs(results);
  if (dirs.empty()) return;
  std::vector<std::string> argv = {dtbench_executable().string(), "report"};
  for (const auto& dir : dirs) argv.push_back(dir.string());
  argv.insert(argv.end(), {"--out", (sweep_dir / "report").string()});
  ChildProcess report(argv, sweep_dir / "report.log");
  const auto status = report.wait_until(ChildProcess::Clock::now() + std::chrono::minutes(5), stop_requested);
  if (!status || *status != 0) {
    report.terminate(1.0);
    spdlog::warn("the breakdown report failed; see {}", (sweep_dir / "report.log").string());
    return;
  }
  fmt::print("breakdown report (one median run per configuration): {}\n", (sweep_dir / "report" / "report.html").string());
}

SweepBlueprint load_with_options(const SweepOptions& options) {
  SweepBlueprint sweep = load_sweep(options.file, options.overrides);
  if (!options.output.empty()) sweep.output = options.output;
  if (options.repetitions) sweep.repetitions = *options.repetitions;
  if (options.warmup) sweep.warmup = *options.warmup;
  if (options.cap_s) sweep.cap_s = *options.cap_s;
  return sweep;
}

// The k-th run of a configuration (warm-ups first) and the directory it goes into.
struct RunSlot {
  bool warmup = false;
  int64_t repetition = 0;  // from 1, within warm-ups or within measured runs
  fs::path dir;
};

RunSlot run_slot(const SweepBlueprint& sweep, const fs::path& configuration_dir, int64_t k) {
  RunSlot slot{.warmup = k < sweep.warmup, .repetition = k < sweep.warmup ? k + 1 : k - sweep.warmup + 1, .dir = {}};
  slot.dir = configuration_dir / fmt::format("{}-{}", slot.warmup ? "warmup" : "rep", slot.repetition);
  return slot;
}

// "1:02:03" or "4:05".
std::string clock_text(double seconds) {
  const auto s = static_cast<int64_t>(std::max(0.0, seconds) + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

// The runs still to make, and those an earlier start left (with their total time).
struct RunsLeft {
  size_t to_make = 0, kept = 0;
  double kept_seconds = 0;
};

RunsLeft runs_left(const SweepBlueprint& sweep, const std::vector<SweepConfiguration>& configurations,
                   const fs::path& sweep_dir) {
  RunsLeft left;
  for (const auto& c : configurations) {
    if (!c.missing.empty()) continue;
    for (int64_t k = 0; k < sweep.warmup + sweep.repetitions; ++k) {
      const auto run = kept_run(run_slot(sweep, sweep_dir / c.id, k).dir);
      if (!run) {
        ++left.to_make;
        continue;
      }
      ++left.kept;
      left.kept_seconds += run->process_seconds;
    }
  }
  return left;
}

// How long the runs still to make will take: the mean of the runs an earlier start left, times
// their number; without any, only the bound the cap sets.
void print_estimate(const SweepBlueprint& sweep, const RunsLeft& left) {
  if (left.kept > 0) {
    fmt::print("estimate: {} run(s) to make, about {} (the mean of the {} run(s) kept from an earlier start)\n",
               left.to_make, clock_text(left.to_make * left.kept_seconds / static_cast<double>(left.kept)), left.kept);
  } else {
    fmt::print("estimate: {} run(s) to make, at most {} at the {:g} s cap each; no run measured yet to estimate from\n",
               left.to_make, clock_text(static_cast<double>(left.to_make) * sweep.cap_s), sweep.cap_s);
  }
}

void print_dry_run(const SweepBlueprint& sweep, const std::vector<SweepConfiguration>& configurations,
                   const fs::path& sweep_dir) {
  for (const auto& c : configurations) {
    std::string where = c.cluster ? " on " + c.cluster->label() : "";
    if (c.cluster && c.needs_servers()) where += fmt::format(", {} server(s)", c.servers);
    for (const auto& [name, value] : c.mca) where += fmt::format(", --mca {} {}", name, value);
    fmt::print("  {}: {}\n", c.id,
               c.missing.empty() ? fmt::format("{} worker(s), transport {}{}", c.workers, c.transport, where)
                                 : "missing: " + c.missing);
  }
  print_estimate(sweep, runs_left(sweep, configurations, sweep_dir));
}

void warn_about_loopback_servers(const SweepBlueprint& sweep, const std::vector<SweepConfiguration>& configurations) {
  const bool any_servers = std::any_of(configurations.begin(), configurations.end(),
                                       [](const SweepConfiguration& c) { return c.needs_servers() && c.missing.empty(); });
  if (any_servers && !sweep.launch.hostfile.empty() && sweep.launch.ps_host.starts_with("127.")) {
    spdlog::warn("workers start on the hosts of {}, but parameter servers listen on {} (loopback): set launch.ps_host "
                 "to an address of this host that the others can reach",
                 sweep.launch.hostfile, sweep.launch.ps_host);
  }
}

// Where the sweep stands, for the progress lines.
struct SweepProgress {
  size_t total = 0, done = 0, skipped = 0, ran = 0;
  size_t to_make = 0;  // at the start: the runs not kept from an earlier start
  ChildProcess::Clock::time_point start = ChildProcess::Clock::now();
  double run_seconds = 0;  // of the runs made by this start

  // "elapsed 1:23, about 4:56 left": the runs still to make at the mean of those made so far.
  std::string timing() const {
    const double elapsed = std::chrono::duration<double>(ChildProcess::Clock::now() - start).count();
    const double left =
        ran > 0 && to_make > ran ? static_cast<double>(to_make - ran) * run_seconds / static_cast<double>(ran) : 0.0;
    return fmt::format("elapsed {}, about {} left", clock_text(elapsed), clock_text(left));
  }
};

// Every repetition of one configuration: kept from an earlier start, or run now.
ConfigurationResult run_configuration(const SweepBlueprint& sweep, const SweepConfiguration& c,
                                      const fs::path& sweep_dir, SweepProgress& progress, ClusterLease& clusters) {
  ConfigurationResult result;
  result.configuration = c;
  const int64_t runs_per_configuration = sweep.warmup + sweep.repetitions;
  if (!c.missing.empty()) {
    progress.done += static_cast<size_t>(runs_per_configuration);
    fmt::print("{}: missing — {}\n", c.id, c.missing);
    return result;
  }
  const fs::path dir = sweep_dir / c.id;
  check_or_record_settings(dir, c);
  for (int64_t k = 0; k < runs_per_configuration && !stop_requested(); ++k) {
    const auto [warmup, repetition, run_dir] = run_slot(sweep, dir, k);
    ++progress.done;
    if (auto kept = kept_run(run_dir)) {
      ++progress.skipped;
      result.runs.push_back(*kept);
      continue;
    }
    SweepRun run = run_repetition(sweep, c, run_dir, repetition, warmup, stop_requested, clusters.acquire(c.cluster));
    ++progress.ran;
    progress.run_seconds += run.process_seconds;
    fmt::print("[{}/{}] {} {} {}: {} in {:.1f} s ({}){}\n", progress.done, progress.total, c.id,
               warmup ? "warm-up" : "repetition", repetition, run.status, run.process_seconds, progress.timing(),
               run.error.empty() ? "" : " — " + run.error);
    std::fflush(stdout);
    result.runs.push_back(std::move(run));
  }
  return result;
}

void print_results(const SweepBlueprint& sweep, const SweepResults& results, const fs::path& sweep_dir,
                   const SweepProgress& progress) {
  fmt::print("\n{} run(s) made, {} kept from an earlier start\n", progress.ran, progress.skipped);
  for (const auto& table : sweep_tables(sweep, results)) fmt::print("\n{}", render_text(table));
  fmt::print("\nresults: {}, {}, {}\n", (sweep_dir / "results.csv").string(), (sweep_dir / "results.json").string(),
             (sweep_dir / "results.md").string());
}

}  // namespace

void run_sweep(const SweepOptions& options) {
  const SweepBlueprint sweep = load_with_options(options);
  const std::vector<SweepConfiguration> configurations = expand_sweep(sweep);
  const fs::path sweep_dir = fs::path(sweep.output) / sweep.name;
  fmt::print("sweep {}: {} configuration(s) x ({} warm-up + {} measured) run(s), cap {:g} s -> {}\n", sweep.name,
             configurations.size(), sweep.warmup, sweep.repetitions, sweep.cap_s, sweep_dir.string());
  if (options.dry_run) {
    print_dry_run(sweep, configurations, sweep_dir);
    return;
  }
  warn_about_loopback_servers(sweep, configurations);
  fs::create_directories(sweep_dir);
  spdlog::info("runs use {}", dtbench_executable().string());
  adopt_orphaned_descendants();  // a rank whose mpirun was killed is still ours to stop
  std::signal(SIGINT, request_sweep_stop);
  std::signal(SIGTERM, request_sweep_stop);
  for (const auto& synthesis : sweep.synthesize) synthesize_data(synthesis, sweep_dir);
  SweepProgress progress{.total = configurations.size() * static_cast<size_t>(sweep.warmup + sweep.repetitions),
                         .to_make = runs_left(sweep, configurations, sweep_dir).to_make};
  std::vector<ConfigurationResult> collected;
  {
    ClusterLease clusters;  // removed at the end of this block, whatever ends it
    for (const auto& c : configurations) {
      collected.push_back(run_configuration(sweep, c, sweep_dir, progress, clusters));
      if (stop_requested()) break;
    }
  }
  const SweepResults results = summarize_sweep(sweep, collected);
  write_sweep_results(sweep, results, sweep_dir);
  print_results(sweep, results, sweep_dir, progress);
  if (sweep.repetitions < kEnoughRepetitions && !results.comparisons.empty()) {
    spdlog::warn("{} measured repetition(s) per configuration, fewer than {}: differences between configurations "
                 "cannot be told from run-to-run noise (with 5 + 5 runs a Mann-Whitney test can reach p < 0.05)",
                 sweep.repetitions, kEnoughRepetitions);
  }
  if (stop_requested()) {
    throw std::runtime_error(fmt::format("sweep interrupted by signal {}; start it again to resume where it stopped",
                                         static_cast<int>(sweep_stop_signal)));
  }
  if (options.report) write_breakdown_report(results, sweep_dir);
}

}  // namespace dtbench
