// dtbench train: workers train a blueprint's model on their shards of the data set, write the run
// directory and print the per-phase breakdown. One worker runs alone; several are started by
// mpirun (or srun) and synchronise through the blueprint's transport.
#include <csignal>
#include <filesystem>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "allreduce/mpi_session.h"
#include "allreduce/register.h"
#include "comm/registry.h"
#include "core/data/open_dataset.h"
#include "core/models/models.h"
#include "core/train/trainer.h"
#include "core/util/blas.h"
#include "core/util/error.h"
#include "launch/blueprint/blueprint.h"
#include "launch/commands.h"
#include "launch/monitor/resource_sampler.h"
#include "launch/run_directory.h"
#include "launch/report/run_summary.h"
#include "paramserver/register.h"

namespace dtbench {

namespace {

// `dtbench data synth` leaves this file beside the data, so reports can say the data is synthetic.
constexpr const char* kSyntheticMarker = "SYNTHETIC";

// Set by SIGINT / SIGTERM: the loop stops before its next step (a wait on a peer stops too) and
// the report says why.
volatile std::sig_atomic_t stop_signal = 0;

void request_stop(int signal) { stop_signal = signal; }

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
  int rank = 0;
  int world = 1;
  std::string run_dir;  // exact run directory (sweeps); empty: a new one under the blueprint's output
};

// What this process is in the run: rank, world, and how to talk to the others.
struct Worker {
  std::unique_ptr<MpiSession> mpi;  // null for a single worker without mpirun
  std::unique_ptr<ControlChannel> channel;
  int rank() const { return channel->rank(); }
  int world() const { return channel->world(); }
};

Blueprint resolve_blueprint(const TrainOptions& options) {
  if (options.config.empty()) {
    return parse_blueprint(std::string(default_blueprint_text()), "built-in blueprint", options.overrides);
  }
  return load_blueprint(options.config, options.overrides);
}

nlohmann::json data_json(const Blueprint& bp, const DatasetPair& data) {
  const bool synthetic = std::filesystem::exists(std::filesystem::path(bp.data.path) / kSyntheticMarker);
  return {{"format", bp.data.format},
          {"path", bp.data.path},
          {"train_samples", data.train->size()},
          {"test_samples", data.test->size()},
          {"classes", data.train->classes()},
          {"sample_shape", data.train->sample_shape()},
          {"cache", bp.data.cache},
          {"synthetic", synthetic},
          {"sources", data.train->sources()}};
}

Worker join_run(const Blueprint& bp, const TrainOptions& options) {
  Worker worker;
  const bool allreduce = bp.transport == "ring" || bp.transport == "mpi";
  const bool ps = bp.transport == "ps-sync" || bp.transport == "ps-async";
  if (ps && !MpiSession::launched_by_mpi()) {
    const PsTransportOptions ps_options = ps_transport_options(bp, options.rank, options.world);
    register_ps_transports(ps_options);
    worker.channel = make_ps_channel(ps_options, options.rank, options.world);
  } else if (allreduce || MpiSession::launched_by_mpi()) {
    if (!bp.comm.iface.empty()) setenv("OMPI_MCA_btl_tcp_if_include", bp.comm.iface.c_str(), 1);
    worker.mpi = std::make_unique<MpiSession>();
    worker.channel = worker.mpi->control_channel(
        {.timeout_seconds = bp.comm.timeout_s, .stop_requested = [] { return stop_signal != 0; }, .describe = {}});
    register_allreduce_transports({.bucket_bytes = static_cast<int64_t>(bp.comm.bucket_mb * (1 << 20)),
                                   .overlap = bp.comm.overlap,
                                   .chunk_bytes = bp.comm.chunk_kb * 1024,
                                   .timeout_seconds = bp.comm.timeout_s,
                                   .threads_allowed = worker.mpi->thread_multiple(),
                                   .stop_requested = [] { return stop_signal != 0; }});
    if (ps) register_ps_transports(ps_transport_options(bp, worker.rank(), worker.world()));
    if (worker.world() > 1 && bp.transport == "none") {
      fail_input("{} workers were started but transport is 'none': choose ring or mpi (--set transport=ring)",
                 worker.world());
    }
  } else {
    worker.channel = std::make_unique<SoloChannel>();
  }
  // Threads per worker: the cores of this host shared among its workers, unless set.
  const int local_workers = worker.mpi ? worker.mpi->local_world() : 1;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  blas::set_threads(bp.threads > 0 ? bp.threads : std::max(1, cores / local_workers));
  return worker;
}

// Rank 0 names the run directory; every rank writes into it (on a cluster without a shared file
// system each host gets its own copy of the directory, with its ranks' files).
RunDirectory open_run_directory(const Blueprint& bp, const TrainOptions& options, Worker& worker) {
  std::string path;
  if (worker.rank() == 0) {
    if (!options.run_dir.empty() && std::filesystem::exists(std::filesystem::path(options.run_dir) / "report.json")) {
      fail_input("--run-dir {}: it already holds a run's report.json; choose a new directory", options.run_dir);
    }
    path = !options.run_dir.empty() ? RunDirectory::open(options.run_dir).path().string()
                                    : RunDirectory::create(bp.output, bp.name, bp.transport).path().string();
  }
  return RunDirectory::open(worker.channel->broadcast(path));
}

void train_as_worker(const Blueprint& bp, const TrainOptions& options, Worker& worker) {
  const int rank = worker.rank(), world = worker.world();
  const bool root = rank == 0;
  const DatasetPair data = open_dataset({bp.data.format, bp.data.path, bp.data.cache});
  // The model first: a data set it cannot take is the clearer error.
  Shape sample_shape = data.train->sample_shape();
  if (bp.data.resize > 0) sample_shape = {sample_shape[0], bp.data.resize, bp.data.resize};
  auto model = models::build(bp.model, sample_shape, data.train->classes());
  model->initialize(bp.seed);

  const Normalization norm = compute_normalization(*data.train);
  LoaderOptions train_options{.batch = bp.batch, .rank = rank, .world = world, .seed = bp.seed,
                              .shuffle = true, .augment = bp.data.augment, .resize = bp.data.resize};
  Loader train_loader(data.train, train_options, norm);
  // Evaluation: every worker sees every test sample once, in order, the last batch possibly smaller.
  LoaderOptions test_options{.batch = std::min(bp.batch, data.test->size()), .seed = bp.seed,
                             .shuffle = false, .resize = bp.data.resize, .drop_last = false};
  Loader test_loader(data.test, test_options, norm);
  auto transport = make_transport(bp.transport, {.optimizer = bp.optimizer});

  const RunDirectory run = open_run_directory(bp, options, worker);
  ResourceSampler sampler;  // CPU, memory (and GPU) once a second until the run ends
  if (root) run.write("blueprint.yaml", YAML::Dump(bp.resolved) + "\n");
  RunSummary summary;
  summary.run_id = run.id();
  summary.transport = bp.transport;
  summary.rank = rank;
  summary.world = world;
  summary.blueprint = blueprint_json(bp.resolved);
  summary.provenance = collect_provenance();
  summary.data = data_json(bp, data);
  summary.model = {{"name", model->name()},
                   {"parameters", model->parameter_count()},
                   {"macs_per_sample", model->macs_per_sample()},
                   {"input", model->sample_input_shape()},
                   {"classes", model->classes()}};
  summary.clock_read_seconds = Profiler::clock_cost_seconds();
  // Each worker keeps its own report; rank 0's report.json also holds every worker's phases,
  // gathered after each epoch (a collective: all ranks reach it together).
  std::vector<std::string> workers;
  auto write_reports = [&] {
    nlohmann::json own = report_json(summary);
    own["transport_summary"] = transport->summary();
    own["resources"] = sampler.summary();
    run.write(fmt::format("worker-{}.json", rank), own.dump(2) + "\n");
    if (!root) return;
    if (!workers.empty()) own["workers"] = workers_json(workers);
    run.write("report.json", own.dump(2) + "\n");
  };

  if (root) {
    spdlog::info("training {} ({} parameters) on {} ({} train / {} test samples), {} worker(s) x batch {}, "
                 "{} epoch(s), transport {}, BLAS core {} with {} threads -> {}",
                 model->name(), model->parameter_count(), bp.data.path, data.train->size(), data.test->size(),
                 world, bp.batch, bp.epochs, bp.transport, blas::core_name(), blas::threads(), run.path().string());
  }
  write_reports();
  std::optional<TraceWriter> trace;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  try {
    transport->start(*model);
    // Opened once the transport has measured this worker's clock against the run's reference, which
    // the trace records for `dtbench report` to merge the workers' timelines. Streamed as the run
    // goes; a run that dies leaves the events so far (an unclosed JSON array).
    if (bp.trace_steps > 0) {
      trace.emplace(run.path() / fmt::format("trace-{}.json", rank),
                    TraceOptions{.rank = rank,
                                 .steps_per_epoch = bp.trace_steps,
                                 .clock = transport->clock_alignment()});
    }
    Trainer trainer(*model, train_loader, &test_loader, *transport,
                    {.epochs = bp.epochs, .max_steps = bp.steps, .show_progress = root,
                     .stop_requested = [] { return stop_signal != 0; }, .time_operators = bp.time_operators,
                     .trace = trace ? &*trace : nullptr,
                     .compute_delay_seconds = bp.straggler.rank == rank ? bp.straggler.delay_ms / 1e3 : 0.0});
    trainer.run([&](const EpochResult& epoch) {
      summary.epochs.push_back(epoch);
      summary.wall_seconds = epoch.wall_seconds;
      sampler.add_transport_bytes(epoch.sync_total.bytes_sent, epoch.sync_total.bytes_received);
      if (world > 1) workers = worker.channel->gather(report_json(summary).dump());
      write_reports();
      if (root) {
        spdlog::info("epoch {}: test accuracy {:.2f}%, test loss {:.4f}, {:.0f} images/s per worker", epoch.epoch,
                     100 * epoch.test.accuracy, epoch.test.loss, epoch.images_per_second);
      }
    });
    transport->stop(*model);
    if (trace) trace->finish();
  } catch (const std::exception& error) {
    if (trace) trace->finish();
    summary.status = "failed";
    summary.error = stop_signal != 0 ? fmt::format("{} (signal {})", error.what(), static_cast<int>(stop_signal))
                                     : error.what();
    sampler.stop();
    write_reports();
    throw;
  }
  summary.status = "complete";
  sampler.stop();  // its last sample goes into the final report: a run shorter than the interval has one too
  if (bp.save_weights && root) {
    const auto values = model->arena().values();
    run.write("weights.bin", std::string(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
  }
  write_reports();
  if (!root) return;
  fmt::print("\n{} on {} — {} worker(s), transport {}, BLAS core {} ({}), {} threads per worker\n", model->name(),
             bp.data.path, world, bp.transport, blas::core_name(), blas::core_selection(), blas::threads());
  fmt::print("{}\n{}", epochs_table(summary.epochs), breakdown_table(summary.epochs));
  if (!workers.empty()) fmt::print("\n{}", workers_table(workers));
  const EpochResult& last = summary.epochs.back();
  if (!last.operators.empty()) {
    fmt::print("\n{}", operators_table(last.operators, last.phases.steps));
    const double reads = operator_clock_reads_per_step(last.operators, last.phases.steps);
    fmt::print("  timing them costs {:.0f} clock reads per step, {:.2f} µs, about {:.3f}% of a step\n", reads,
               1e6 * reads * summary.clock_read_seconds,
               100 * reads * summary.clock_read_seconds / std::max(1e-12, last.phases.step.mean));
  }
  fmt::print("\nreport: {}\n", (run.path() / "report.json").string());
}

void run_training(const TrainOptions& options) {
  const Blueprint bp = resolve_blueprint(options);
  Worker worker = join_run(bp, options);
  try {
    train_as_worker(bp, options, worker);
  } catch (const std::exception& error) {
    if (worker.mpi && worker.world() > 1) {
      // One rank's error ends the job: the others may be waiting for this rank.
      spdlog::error("rank {}: {}", worker.rank(), error.what());
      MpiSession::abort(dynamic_cast<const InputError*>(&error) != nullptr ? 2 : 1);
    }
    throw;
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto* command = app.add_subcommand("train", "Train a blueprint's model and report the per-phase breakdown");
  auto options = std::make_shared<TrainOptions>();
  command->add_option("--config", options->config, "Blueprint YAML (default: the built-in LeNet-5 / Fashion-MNIST)");
  command->add_option("--set", options->overrides, "Override a blueprint key: --set optimizer.lr=0.1");
  command->add_option("--rank", options->rank, "This worker's rank without mpirun (parameter servers)");
  command->add_option("--world", options->world, "Number of workers without mpirun (parameter servers)");
  command->add_option("--run-dir", options->run_dir,
                      "Write the run into exactly this directory (default: a new one under the blueprint's output)");
  auto iface = std::make_shared<std::string>();
  command->add_option("--iface", *iface, "Network interface for the workers' traffic (same as --set comm.iface=NAME)");
  command->callback([options, iface] {
    if (!iface->empty()) options->overrides.push_back("comm.iface=" + *iface);
    run_training(*options);
  });
}

}  // namespace dtbench
