// dtbench bench ops: for each operator family and shape, every pass is run `warmup` times
// untimed, then `iters` times timed one by one (fewer past --max-seconds); the median time
// becomes a rate (op_costs.h) and a percentage of the ceiling of its kind, both ceilings measured
// by this same command on the same threads before and after the operators, the best of the two
// kept (machine_ceilings.h). Shapes are built one at a time (op_cases.h).
#include "launch/bench/ops.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "core/util/blas.h"
#include "core/util/error.h"
#include "launch/bench/ops_report.h"
#include "core/util/files.h"
#include "launch/report/statistics.h"

namespace dtbench {

namespace {

struct OpsBenchOptions {
  int threads = 0;
  int iterations = 10;
  int warmup = 2;
  double max_pass_seconds = 1.0;  // 0: no limit
  std::vector<std::string> ops;  // empty: every family
  std::string sizes = "default";
  std::string json;
};

SizeSet parse_size_set(const std::string& name) {
  if (name == "small") return SizeSet::Small;
  if (name == "default") return SizeSet::Default;
  fail_input("--sizes: unknown size set '{}'; choose small or default", name);
}

void check_options(const OpsBenchOptions& options) {
  if (options.iterations < 1) fail_input("--iters must be at least 1, got {}", options.iterations);
  if (options.warmup < 0) fail_input("--warmup must be 0 or more, got {}", options.warmup);
  if (options.threads < 0) fail_input("--threads must be 0 (one per core) or more, got {}", options.threads);
  if (options.max_pass_seconds < 0) {
    fail_input("--max-seconds must be 0 (no limit) or more, got {}", options.max_pass_seconds);
  }
}

// A pass stops its timed runs early once they have taken --max-seconds, but not before this many:
// tanh's forward over 33M values takes most of a second, and ten of them would hold up the sweep.
constexpr int kMinTimedRuns = 3;

// Times `pass.run` one call at a time, after the warm-up calls, into `row`.
void time_pass(const OpPass& pass, const OpsBenchOptions& options, OpRow& row) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < options.warmup; ++i) pass.run();
  std::vector<double> seconds;
  double total_seconds = 0;
  for (int i = 0; i < options.iterations; ++i) {
    const auto start = Clock::now();
    pass.run();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    total_seconds += seconds.back();
    const bool enough = static_cast<int>(seconds.size()) >= kMinTimedRuns;
    if (enough && options.max_pass_seconds > 0 && total_seconds >= options.max_pass_seconds) break;
  }
  const Spread spread = spread_of(std::move(seconds));
  row.iterations = static_cast<int>(spread.count);
  row.median_seconds = spread.median;
  row.min_seconds = spread.min;
  row.max_seconds = spread.max;
}

OpsReport run_ops_bench(const OpsBenchOptions& options) {
  check_options(options);
  const SizeSet size_set = parse_size_set(options.sizes);
  const std::vector<const OpFamily*> families = select_op_families(options.ops);  // before the ceilings: fail fast
  if (options.threads > 0) blas::set_threads(options.threads);

  OpsReport report;
  report.sizes = options.sizes;
  report.iterations = options.iterations;
  report.warmup = options.warmup;
  report.max_pass_seconds = options.max_pass_seconds;
  const CeilingOptions ceiling_options{.threads = blas::threads()};
  report.ceilings = measure_ceilings(ceiling_options);
  for (const OpFamily* family : families) {
    for (const Shape& shape : family->shapes(size_set)) {
      for (const OpPass& pass : family->build(shape)) {
        OpRow row{.op = family->name, .pass = pass.name, .shape = family->shape_text(shape), .bound = pass.bound,
                  .work = pass.work};
        time_pass(pass, options, row);
        report.rows.push_back(row);
      }
    }
  }
  report.ceilings.keep_best(measure_ceilings(ceiling_options));
  for (OpRow& row : report.rows) {
    row.ceiling = row.bound == Bound::Compute ? report.ceilings.best_gemm().gflops : report.ceilings.bandwidth_gbps();
  }
  return report;
}

void write_json(const OpsReport& report, const std::string& path) {
  write_file_atomically(path, ops_report_json(report).dump(2) + "\n");
}

}  // namespace

void add_ops_bench(CLI::App& bench) {
  auto* command = bench.add_subcommand(
      "ops", "Operator micro-benchmarks against a measured GEMM and memory-bandwidth ceiling");
  auto options = std::make_shared<OpsBenchOptions>();
  std::string families;
  for (const OpFamily& family : op_families()) families += (families.empty() ? "" : ", ") + family.name;
  command->add_option("--threads", options->threads, "BLAS and ceiling threads (0: one per core)");
  command->add_option("--iters", options->iterations, "Timed runs per pass, the median reported (see --max-seconds)")
      ->capture_default_str();
  command->add_option("--warmup", options->warmup, "Untimed runs first")->capture_default_str();
  command->add_option("--max-seconds", options->max_pass_seconds,
                      "Fewer timed runs (at least 3) once a pass has taken this long (0: no limit)")
      ->capture_default_str();
  command->add_option("--ops", options->ops, "Operators, comma-separated (default: all): " + families)
      ->delimiter(',');
  command->add_option("--sizes", options->sizes, "Shape set: small (one shape each) or default")
      ->capture_default_str();
  command->add_option("--json", options->json, "Also write every number to this JSON file");
  command->callback([options] {
    const OpsReport report = run_ops_bench(*options);
    fmt::print("{}", render_ops_text(report));
    if (!options->json.empty()) write_json(report, options->json);
  });
}

}  // namespace dtbench
