// dtbench predict RUN_DIR: the step time each transport would take at other worker counts and link
// rates, from the run's measured compute and constants fitted to bench outputs (launch/predict).
// dtbench predict --fit RUN_DIR,RUN_DIR[,LINK:FILE...] --workers N: the run's transport at N workers
// fitted on runs of smaller clusters alone (and, where they are at one host count, the benches).
#include <filesystem>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "comm/transport_catalogue.h"
#include "core/tuning/summing_speed.h"
#include "core/util/error.h"
#include "launch/blueprint/number_option.h"
#include "launch/commands.h"
#include "launch/predict/predict.h"

namespace dtbench {

namespace {

struct PredictOptions {
  std::string run_dir;
  std::vector<int> workers = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  std::vector<std::string> links = {"1gbit", "10gbit", "100gbit"};
  // Those the cost model has: allreduce on the host and parameter servers.
  std::vector<std::string> transports = transport_names_where([](const TransportRow& row) {
    return row.family == TransportFamily::MpiAllreduce || row.family == TransportFamily::ParameterServer;
  });
  std::vector<std::string> fits;
  int shards = 0;
  bool servers_apart = false;
  int shared_cores = 0;            // 0: each host has cores of its own
  double reduce_ns_per_byte = -1;  // negative: the bench files' record, else timed here
  double alpha_us = -1;            // negative: the fitted latency at extrapolated links too
  double compute_speedup = 1;      // the measured compute phases divided by this
  bool no_calibrate = false;       // the bench's constants alone, also for the run's own transport and link
  std::string out;
  // Those given of the options that shape a prediction from one run and the benches alone
  // (kOneRunOptions): with --fit RUN_DIR the runs fix what they would set.
  std::vector<std::string> one_run_options_given;
};

// Options of `predict RUN_DIR --fit LINK:FILE` that mean nothing with --fit RUN_DIR: the runs fitted
// on fix the link, the transport and the servers' layout, and their rates are their own.
constexpr const char* kOneRunOptions[] = {"--link",         "--transport", "--shards",  "--servers-apart",
                                          "--shared-cores", "--alpha-us",  "--no-calibrate"};

// The cost of summing a received byte: --reduce-ns-per-byte where given, else what the bench files
// recorded on the cluster's hosts, else timed here (files written before they recorded it) — then
// the prediction depends on the machine that makes it, which the log says.
double summing_s_per_byte(double given_ns_per_byte, const std::vector<FitFile>& benches) {
  if (given_ns_per_byte >= 0) return given_ns_per_byte / 1e9;
  if (const std::optional<double> recorded = recorded_summing_s_per_byte(benches)) return *recorded;
  const double here = measure_summing_s_per_byte();
  spdlog::info("the bench files record no summing cost (reduce_ns_per_byte): timed on this machine, {:.3f} ns a "
               "byte; --reduce-ns-per-byte gives it",
               here * 1e9);
  return here;
}

// Workers faster than the measured one by `speedup` (another CPU, a GPU): every compute phase
// divided by it, and the figures say so.
void scale_compute(MeasuredRun& run, double speedup) {
  run.workload.compute.divide_by(speedup);
  run.source += fmt::format(", compute divided by {:g} (--compute-speedup)", speedup);
}

// --fit RUN_DIR... : every term fitted on those runs, nothing taken from the cluster predicted.
void predict_from_fit_runs(const PredictOptions& o, const std::vector<std::filesystem::path>& runs,
                           const std::vector<FitFile>& benches) {
  if (!o.run_dir.empty()) {
    fail_input("predict: --fit names run directories, so RUN_DIR {} would be unused: the prediction takes nothing "
               "from a run at the predicted size; drop it, or give it to --fit to fit on it too", o.run_dir);
  }
  if (!o.one_run_options_given.empty()) {
    fail_input("predict: {} shape a prediction from one run and the benches (predict RUN_DIR --fit LINK:FILE), not "
               "one fitted on runs (--fit RUN_DIR), whose runs fix the link, the transport and where the servers are, "
               "and whose rates are their own; drop it, or fit on runs made that way",
               fmt::join(o.one_run_options_given, ", "));
  }
  if (runs.size() == 1 && benches.empty()) {
    fail_input("predict: one run to fit on ({}): one run cannot fix how communication grows with the workers; give "
               "runs at two host counts at least (--fit RUN_2,RUN_3), or bench files of its cluster beside it "
               "(--fit RUN,LINK:FILE)", runs.front().string());
  }
  std::optional<FittedConstants> constants;
  if (!benches.empty()) constants.emplace(benches, summing_s_per_byte(o.reduce_ns_per_byte, benches));
  const std::vector<FitRun> fit_runs = load_fit_runs(runs);
  const FittedConstants* benches_fitted = constants ? &*constants : nullptr;
  RunFit fit = fit_on_runs(fit_runs, benches_fitted);
  fit.held_out = held_out_on_own_runs(fit_runs, benches_fitted);
  divide_compute(fit, o.compute_speedup);
  const std::vector<RunFitRow> rows = run_fit_rows(
      fit, o.workers, step_ranges_over_repeats(fit_runs, benches_fitted, o.workers, o.compute_speedup));
  fmt::print("{}", render_text(run_fit_table(fit, rows)));
  if (!o.out.empty()) {
    write_run_fit(fit, rows, o.out);
    spdlog::info("wrote predict.json to {}", o.out);
  }
}

void run_predict(const PredictOptions& o) {
  std::vector<std::filesystem::path> fit_runs;
  std::vector<FitFile> fits;
  for (const std::string& fit : o.fits) {
    if (std::filesystem::is_directory(fit)) {
      fit_runs.emplace_back(fit);
    } else {
      fits.push_back(parse_fit_argument(fit));
    }
  }
  if (!fit_runs.empty()) return predict_from_fit_runs(o, fit_runs, fits);
  if (o.run_dir.empty()) {
    fail_input("predict needs a run: RUN_DIR (its compute, the benches' constants), or --fit RUN_DIR,RUN_DIR "
               "(runs of smaller clusters to fit on)");
  }
  if (!std::filesystem::is_directory(o.run_dir)) fail_input("predict: run directory {} does not exist", o.run_dir);
  if (o.fits.empty()) {
    fail_input("predict needs measured constants: --fit LINK:FILE with the JSON of bench allreduce or bench ps "
               "(e.g. --fit 1gbit:ar.json,1gbit:ps.json)");
  }
  std::vector<LinkRate> links;
  for (const std::string& link : o.links) links.push_back(parse_link_rate(link));
  std::vector<PredictTransport> transports;
  for (const std::string& name : o.transports) transports.push_back(parse_predict_transport(name));
  std::vector<int> workers = o.workers;
  if (std::find(workers.begin(), workers.end(), 1) == workers.end()) workers.insert(workers.begin(), 1);
  std::sort(workers.begin(), workers.end());

  const double reduce = summing_s_per_byte(o.reduce_ns_per_byte, fits);
  const FittedConstants constants(fits, reduce, o.alpha_us >= 0 ? o.alpha_us / 1e6 : -1);
  MeasuredRun run = load_measured_run(o.run_dir);
  take_buckets_sent(run);  // DDP's own buckets, for the check against the run
  if (o.compute_speedup != 1) scale_compute(run, o.compute_speedup);
  PredictionGrid grid = predict_grid(run, workers, links, transports, constants,
                                     {.shards = o.shards, .beside_workers = !o.servers_apart,
                                      .shared_cores = o.shared_cores},
                                     !o.no_calibrate);
  grid.reduce_s_per_byte = reduce;
  fmt::print("{}\n{}", render_text(prediction_table(grid)), render_text(crossover_table(grid)));
  if (grid.check) fmt::print("\n{}", render_text(run_check_table(*grid.check, grid.calibrated)));
  const std::filesystem::path out = o.out.empty() ? std::filesystem::path(o.run_dir) : std::filesystem::path(o.out);
  write_prediction(grid, out);
  spdlog::info("wrote predict.json, predict.csv and predict.html to {}", out.string());
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto* command = app.add_subcommand(
      "predict", "Predict each transport's step time at other worker counts and link rates (a fitted cost model)");
  auto o = std::make_shared<PredictOptions>();
  command->add_option("run_dir", o->run_dir,
                      "A measured run directory (its report.json gives the compute phases); none with --fit RUN_DIR");
  command->add_option("--workers", o->workers, "Worker counts, comma-separated")->delimiter(',')->capture_default_str();
  command->add_option("--link", o->links, "Link rates, comma-separated: 1gbit, 10gbit, 100gbit, ...")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--transport", o->transports, "Transports: ring, mpi, ps-sync, ps-async")
      ->delimiter(',')
      ->capture_default_str();
  command->add_option("--fit", o->fits,
                      "Comma-separated: LINK:FILE, bench allreduce/ps --json outputs and the link rate they were "
                      "measured at; or RUN_DIR, runs of smaller clusters (one model, transport and link) to fit "
                      "every term on, predicting --workers from them alone")
      ->delimiter(',');
  command->add_option("--shards", o->shards, "Parameter-server shards (0: one per worker)")
      ->check(non_negative_number());
  command->add_flag("--servers-apart", o->servers_apart,
                    "Servers on hosts of their own (default: each shard beside a worker)");
  command->add_option("--shared-cores", o->shared_cores,
                      "All hosts share this many cores, as on the emulated cluster (default 0: each host its own)")
      ->check(non_negative_number());
  command->add_option("--reduce-ns-per-byte", o->reduce_ns_per_byte,
                      "Cost of summing a received byte (default: as the bench files recorded it, else timed on this machine)");
  command->add_option("--alpha-us", o->alpha_us,
                      "Latency per message at link rates no --fit measured (default: as fitted at the fastest)");
  command->add_option("--compute-speedup", o->compute_speedup,
                      "What if the workers computed this many times faster than the measured run, or the runs "
                      "--fit names (default 1)")
      ->check(positive_number());
  command->add_flag("--no-calibrate", o->no_calibrate,
                    "Predict the run's own transport at its link from the benches alone (default: carried to "
                    "the rate its communication had inside the run)");
  command->add_option("--out", o->out, "Where predict.json, .csv and .html go (default: the run directory)");
  command->callback([o, command] {
    for (const char* name : kOneRunOptions) {
      if (command->count(name) > 0) o->one_run_options_given.emplace_back(name);
    }
    run_predict(*o);
  });
}

}  // namespace dtbench
