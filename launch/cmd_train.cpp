// dtbench train: workers train a blueprint's model on their shards of the data set, write the run
// directory and print the per-phase breakdown. One worker runs alone; several are started by
// mpirun (or srun) and synchronise through the blueprint's transport.
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "allreduce/job_failure.h"
#include "allreduce/mpi_info.h"
#include "allreduce/mpi_session.h"
#include "allreduce/nccl/register.h"
#include "allreduce/register.h"
#include "comm/registry.h"
#include "comm/transport_catalogue.h"
#include "core/data/open_dataset.h"
#include "core/models/models.h"
#include "core/train/trainer.h"
#include "core/util/blas.h"
#include "core/util/error.h"
#include "engines/engine_table.h"
#include "launch/blueprint/blueprint.h"
#include "launch/blueprint/number_option.h"
#include "launch/blueprint/run_name.h"
#include "launch/cluster/slurm_job.h"
#include "launch/cluster/whereabouts.h"
#include "launch/commands.h"
#include "launch/monitor/proc_parsers.h"
#include "launch/monitor/resource_sampler.h"
#include "launch/report/network.h"
#include "launch/report/run_record.h"
#include "launch/report/run_span.h"
#include "launch/report/run_summary.h"
#include "launch/report/run_warnings.h"
#include "launch/report/verdict_section.h"
#include "launch/run_directory.h"
#include "launch/run_reports.h"
#include "paramserver/in_flight_calls.h"
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
  int local_workers = 0;  // workers sharing this host's cores (without mpirun); 0: inferred
  int freeze_rank = -1;   // testing: this rank stops itself (SIGSTOP) before the exchange `freeze_at`
  std::string freeze_at;
};

// How long a rank that failed waits for the others to write their reports before it ends the
// job: they answer within milliseconds when waiting, so a second or two, never past the timeout.
double job_end_grace(double timeout_seconds) { return std::clamp(timeout_seconds / 2, 0.5, 2.0); }

// What this process is in the run: rank, world, and how to talk to the others.
struct Worker {
  std::unique_ptr<MpiSession> mpi;  // null for a single worker without mpirun
  std::unique_ptr<ControlChannel> channel;
  int rank() const { return channel->rank(); }
  int world() const { return channel->world(); }
  int local_rank() const { return mpi ? mpi->local_rank() : 0; }  // picks the GPU with device: cuda
};

Blueprint resolve_blueprint(const TrainOptions& options) {
  if (options.config.empty()) {
    return parse_blueprint(std::string(default_blueprint_text()), "built-in blueprint", options.overrides);
  }
  return load_blueprint(options.config, options.overrides);
}

nlohmann::json data_json(const Blueprint& bp, const DatasetPair& data) {
  const bool synthetic = std::filesystem::exists(std::filesystem::path(bp.data.path) / kSyntheticMarker);
  return {{"format", bp.data.format}, {"path", bp.data.path}, {"train_samples", data.train->size()},
          {"test_samples", data.test->size()}, {"classes", data.train->classes()},
          {"sample_shape", data.train->sample_shape()}, {"cache", bp.data.cache}, {"synthetic", synthetic},
          {"sources", data.train->sources()}};
}

// What the catalogue says of the blueprint's transport; another engine's own (ddp) has no row.
bool transport_is(const Blueprint& bp, bool (*question)(const TransportRow&)) {
  const TransportRow* row = find_transport_row(bp.transport);
  return row != nullptr && question(*row);
}
bool parameter_servers(const Blueprint& bp) {
  return transport_is(bp, [](const TransportRow& row) { return row.parameter_server(); });
}

// The control channel and the transports of a worker started by mpirun.
void connect_over_mpi(const Blueprint& bp, const TrainOptions& options, const WaitPolicy& policy, Worker& worker) {
  const bool ps = parameter_servers(bp);
  if (options.freeze_rank == worker.mpi->rank() && options.freeze_at == "control-channel") raise(SIGSTOP);
  worker.channel = worker.mpi->control_channel(policy);
  PeerWatch* peers = &worker.mpi->peers();
  const auto bucket_bytes = static_cast<int64_t>(bp.comm.bucket_mb * (1 << 20));
  register_allreduce_transports(
      {.bucket_bytes = bucket_bytes,
       .overlap = bp.comm.overlap,
       .chunk_bytes = bp.comm.chunk_kb * 1024,
       .ring_path = parse_ring_path(bp.comm.ring_path),
       .timeout_seconds = bp.comm.timeout_s,
       .threads_allowed = worker.mpi->thread_multiple(),
       .stop_requested = [] { return stop_signal != 0; },
       .peers = peers,
       .end_job = [peers, grace = job_end_grace(bp.comm.timeout_s)](const std::string& reason, int failed_peer) {
         end_job(reason, {.failed_peer = failed_peer, .stopped = stop_signal != 0, .peers = peers,
                          .grace_seconds = grace});
       },
       .freeze_rank = options.freeze_rank,
       .freeze_at = options.freeze_at});
  register_nccl_transport({.timeout_seconds = bp.comm.timeout_s, .stop_requested = [] { return stop_signal != 0; },
                           .peers = peers, .bucket_bytes = bucket_bytes, .overlap = bp.comm.overlap});
  if (ps) register_ps_transports(ps_transport_options(bp, worker.rank(), worker.world()));
  if (worker.world() > 1 && exchanges_nothing(bp.transport)) {
    fail_input("{} workers were started but transport is 'none': choose ring or mpi (--set transport=ring)",
               worker.world());
  }
}

[[noreturn]] void end_distributed_run(const std::exception& error, Worker& worker, double timeout_seconds);

bool loopback_address(const std::string& address) {
  return address.starts_with("127.") || address.starts_with("localhost:") || address.starts_with("[::1]");
}

// Workers started one by one (parameter servers, no mpirun) do not see each other: --local-workers
// says how many share this host; without it, servers on loopback mean every worker is here (none
// elsewhere could reach them), else this one alone is assumed.
int workers_on_this_host(const Blueprint& bp, const TrainOptions& options) {
  if (options.local_workers > 0) return options.local_workers;
  if (!parameter_servers(bp) || bp.ps.servers.empty()) return 1;
  const bool all_loopback = std::all_of(bp.ps.servers.begin(), bp.ps.servers.end(), loopback_address);
  return all_loopback ? std::max(1, options.world) : 1;
}

Worker join_run(const Blueprint& bp, const TrainOptions& options) {
  Worker worker;
  const bool allreduce = transport_is(bp, [](const TransportRow& row) { return row.over_mpi(); });
  const bool ps = parameter_servers(bp);
  if (ps && !MpiSession::launched_by_mpi()) {
    const PsTransportOptions ps_options = ps_transport_options(bp, options.rank, options.world);
    register_ps_transports(ps_options);
    worker.channel = make_ps_channel(ps_options, options.rank, options.world);
  } else if (allreduce || MpiSession::launched_by_mpi()) {
    if (!bp.comm.iface.empty()) setenv("OMPI_MCA_btl_tcp_if_include", bp.comm.iface.c_str(), 1);
    WaitPolicy policy;
    policy.timeout_seconds = bp.comm.timeout_s;
    policy.stop_requested = [] { return stop_signal != 0; };
    worker.mpi = std::make_unique<MpiSession>(policy);
    try {
      connect_over_mpi(bp, options, policy, worker);
    } catch (const std::exception& error) {
      // MPI is up: leaving by unwinding would wait in MPI_Finalize for the rank that is missing.
      if (worker.mpi->world() > 1) end_distributed_run(error, worker, bp.comm.timeout_s);
      throw;
    }
  } else {
    worker.channel = std::make_unique<SoloChannel>();
  }
  if (options.world > 1 && !ps && !MpiSession::launched_by_mpi()) {
    spdlog::warn("--world {} outside mpirun with transport '{}': this process trains alone, as one worker; start "
                 "workers with mpirun -np {}, or use a parameter-server transport (ps-sync, ps-async)",
                 options.world, bp.transport, options.world);
  }
  // Threads per worker: the cores of this host shared among its workers, unless set.
  const int local_workers = worker.mpi ? worker.mpi->local_world() : workers_on_this_host(bp, options);
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  blas::set_threads(bp.threads > 0 ? bp.threads : std::max(1, cores / local_workers));
  return worker;
}

// Rank 0 names the run directory; every rank writes into it (on a cluster without a shared file
// system each host gets its own copy of the directory, with its ranks' files).
std::string create_run_directory(const Blueprint& bp, const TrainOptions& options) {
  if (!options.run_dir.empty() && std::filesystem::exists(std::filesystem::path(options.run_dir) / "report.json")) {
    fail_input("--run-dir {}: it already holds a run's report.json; choose a new directory", options.run_dir);
  }
  return !options.run_dir.empty() ? RunDirectory::open(options.run_dir).path().string()
                                  : RunDirectory::create(bp.output, run_name(bp)).path().string();
}

// A failed run's last words: whatever outlives the worker (its parameter servers) hears of it at
// once rather than after its timeouts (first: that never throws), and this rank's report says so.
void say_failed(RunReports& reports, Transport& transport, const std::string& reason) {
  transport.abandon(reason);
  reports.finish("failed", reason);
}

// While it lives, a failure anywhere in the job (this rank's, or one another rank announces) says
// so before the job ends (allreduce/job_failure.h).
class LastWords {
 public:
  LastWords(RunReports& reports, Transport& transport) {
    set_last_words([&reports, &transport](const std::string& reason) { say_failed(reports, transport, reason); });
  }
  ~LastWords() { set_last_words({}); }
  LastWords(const LastWords&) = delete;
  LastWords& operator=(const LastWords&) = delete;
};

RunSummary start_summary(const Blueprint& bp, const Worker& worker, const DatasetPair& data, const Model& model) {
  RunSummary summary;
  summary.transport = bp.transport;
  summary.rank = worker.rank();
  summary.world = worker.world();
  summary.blueprint = blueprint_json(bp.resolved);
  summary.provenance = collect_provenance();
  record_device(summary.provenance, model.device());
  summary.data = data_json(bp, data);
  summary.model = {{"name", model.name()},
                   {"parameters", model.parameter_count()},
                   {"macs_per_sample", model.macs_per_sample()},
                   {"input", model.sample_input_shape()},
                   {"classes", model.classes()},
                   {"device", model.device() != nullptr ? model.device()->name() : "cpu"}};
  summary.clock_read_seconds = Profiler::clock_cost_seconds();
  if (const auto host = cluster::this_host()) summary.network["cluster"] = cluster::to_json(*host);
  if (const auto yield = worker.mpi ? mpi_yield_when_idle() : std::nullopt) summary.network["mpi_yield_when_idle"] = *yield;
  return summary;
}

// The warnings `dtbench report` will show, read back from the run directory just written: both agree.
void print_warnings(const std::filesystem::path& run_dir) {
  try {
    std::vector<std::string> warnings;
    for (const auto& w : run_warnings(load_run(run_dir))) warnings.push_back(w.line());
    if (!warnings.empty()) fmt::print("\n{}", warnings_text(warnings));
  } catch (const std::exception& error) {
    spdlog::warn("no warnings checked: {}", error.what());
  }
}

void print_results(const Blueprint& bp, const Engine& trainer, const RunSummary& summary, const Model& model,
                   const RunReports& reports) {
  const std::string engine = trainer.provenance_line(summary.provenance.engine);
  fmt::print("\n{} on {} — {} worker(s), transport {}, {}, {} threads per worker{}\n", model.name(), bp.data.path,
             summary.world, bp.transport, engine, blas::threads(),
             model.device() != nullptr ? ", device " + model.device()->name() + ", " + bp.precision : "");
  fmt::print("{}\n{}", epochs_table(summary.epochs), breakdown_table(summary.epochs));
  const auto autotune = fmt::format("; of it, autotune {:.2f} s, before the first step", summary.autotune_seconds);
  fmt::print("Start-up {:.2f} s (dtbench's start to the first step{})\n", summary.startup_seconds,
             summary.autotune_seconds > 0.0 ? autotune : std::string());
  if (const auto conv = summary.provenance.engine.find("conv_algorithms"); conv != summary.provenance.engine.end()) {
    fmt::print("Convolutions {}\n", conv->value("summary", std::string()));
  }
  if (const auto span = run_span_of(report_json(summary), reports.workers())) fmt::print("{}", run_span_line(*span));
  if (!reports.workers().empty()) {
    fmt::print("\n{}", workers_table(reports.workers()));
    fmt::print("\n{}", network_text(run_network(reports.workers(), bp.transport)));
  }
  const EpochResult& last = summary.epochs.back();
  if (!last.operators.empty()) {
    fmt::print("\n{}", operators_table(last.operators, last.phases.steps));
    const double reads = operator_clock_reads_per_step(last.operators, last.phases.steps);
    fmt::print("  timing them costs {:.0f} clock reads per step, {:.2f} µs, about {:.3f}% of a step\n", reads,
               1e6 * reads * summary.clock_read_seconds,
               100 * reads * summary.clock_read_seconds / std::max(1e-12, last.phases.step.mean));
  }
  print_warnings(reports.run().path());
  fmt::print("\nreport: {}\n", (reports.run().path() / "report.json").string());
}

// The model, the loaders and the transport of one worker, ready to train.
struct Setup {
  std::unique_ptr<DeviceBackend> device;  // null: the host; outlives the model it runs
  DatasetPair data;
  std::unique_ptr<Model> model;
  std::unique_ptr<Loader> train;  // a Loader owns a prefetch thread and does not move
  std::unique_ptr<Loader> test;
  std::unique_ptr<Transport> transport;
};

Setup set_up(const Blueprint& bp, const Engine& engine, const Worker& worker) {
  Setup s;
  // first: a device this worker lacks (or a precision it lacks) ends the run at once
  s.device = open_device(bp.device, worker.local_rank(), parse_precision(bp.precision, "precision"));
  s.data = open_dataset({bp.data.format, bp.data.path, bp.data.cache});
  // The model first: a data set it cannot take is the clearer error.
  Shape sample_shape = s.data.train->sample_shape();
  if (bp.data.resize > 0) sample_shape = {sample_shape[0], bp.data.resize, bp.data.resize};
  s.model = models::build(bp.model, sample_shape, s.data.train->classes(), s.device.get());
  s.model->initialize(bp.seed);
  const Normalization norm = compute_normalization(*s.data.train);
  s.train = std::make_unique<Loader>(s.data.train,
                  LoaderOptions{.batch = bp.batch, .rank = worker.rank(), .world = worker.world(), .seed = bp.seed,
                                .shuffle = true, .augment = bp.data.augment, .resize = bp.data.resize},
                  norm);
  // Evaluation: every worker sees every test sample once, in order, the last batch possibly smaller.
  // With eval.max_samples, batches no larger than it, so that at least one fits.
  const int64_t test_samples =
      bp.eval_max_samples > 0 ? std::min(bp.eval_max_samples, s.data.test->size()) : s.data.test->size();
  s.test = std::make_unique<Loader>(s.data.test,
                 LoaderOptions{.batch = std::min(bp.batch, test_samples), .seed = bp.seed, .shuffle = false,
                               .resize = bp.data.resize, .drop_last = false},
                 norm);
  s.transport = make_transport(engine.transport(bp), {.optimizer = bp.optimizer});
  return s;
}

// After each epoch: its result in the reports, rank 0's report.json with every worker's phases.
void record_epoch(const EpochResult& epoch, Worker& worker, RunSummary& summary, RunReports& reports,
                  ResourceSampler& sampler) {
  summary.epochs.push_back(epoch);
  summary.wall_seconds = epoch.wall_seconds;
  sampler.add_transport_bytes(epoch.sync_total.bytes_sent, epoch.sync_total.bytes_received);
  // A collective: all ranks reach it together; rank 0's report.json holds every worker's phases.
  reports.note_traffic();
  if (worker.world() > 1) reports.set_workers(worker.channel->gather(report_json(summary).dump()));
  reports.write();
  // Every worker starts the next epoch together, once rank 0 has written report.json: else the
  // others start early and wait in their first step for rank 0, and the epoch's span (from the
  // first worker's start, run_span.h) would count rank 0's report writing as training.
  if (worker.world() > 1) worker.channel->broadcast("");
  if (worker.rank() == 0) {
    spdlog::info("epoch {}: test accuracy {:.2f}%, test loss {:.4f}, {:.0f} images/s per worker", epoch.epoch,
                 100 * epoch.test.accuracy, epoch.test.loss, epoch.images_per_second);
  }
}

// What the engine trains with: this worker's model, loaders and transport, and the run's reports.
EngineRun engine_run(const Blueprint& bp, Setup& s, Worker& worker, RunSummary& summary, RunReports& reports,
                     ResourceSampler& sampler) {
  PeerWatch* peers = worker.mpi ? &worker.mpi->peers() : nullptr;
  return {.bp = bp, .model = *s.model, .train_data = *s.data.train, .train = *s.train, .test = s.test.get(),
          .transport = *s.transport, .channel = *worker.channel,
          .local_world = worker.mpi ? worker.mpi->local_world() : 0, .threads = blas::threads(),
          .run_dir = reports.run().path(), .provenance = summary.provenance.engine,
          .autotune_seconds = summary.autotune_seconds,
          // Before every step: a signal, or another rank's failure (which throws).
          .stop_requested = [peers] {
            if (peers != nullptr) peers->service();
            return stop_signal != 0;
          },
          .training_started = [r = &reports, sum = &summary] {
            r->training_started();
            sum->startup_seconds = program_age_seconds();
          },
          .epoch_done = [w = &worker, sum = &summary, r = &reports, m = &sampler](const EpochResult& epoch) {
            record_epoch(epoch, *w, *sum, *r, *m);
          },
          .count_as_own = [m = &sampler](pid_t pid) { m->count_as_own(pid); }};
}

std::string failure_reason(const std::exception& error) {
  if (stop_signal == 0) return error.what();
  const int signal = static_cast<int>(stop_signal);
  const std::optional<std::string> slurm = cluster::slurm_stop_cause(signal);
  return fmt::format("{} ({})", error.what(), slurm ? *slurm : fmt::format("signal {}", signal));
}

// One rank's error ends the job: the others may be waiting for this rank. Every rank still
// running writes its report first (allreduce/job_failure.h).
[[noreturn]] void end_distributed_run(const std::exception& error, Worker& worker, double timeout_seconds) {
  const auto* peer = dynamic_cast<const PeerFailure*>(&error);
  end_job(failure_reason(error), {.code = dynamic_cast<const InputError*>(&error) != nullptr ? 2 : 1,
                                  .failed_peer = peer != nullptr ? peer->rank() : -1,
                                  .stopped = stop_signal != 0,
                                  .peers = &worker.mpi->peers(),
                                  .grace_seconds = job_end_grace(timeout_seconds)});
}

void train_as_worker(const Blueprint& bp, const TrainOptions& options, Worker& worker) {
  const int rank = worker.rank();
  const Engine& engine = engine_named(bp.engine);
  Setup s = set_up(bp, engine, worker);
  RunSummary summary = start_summary(bp, worker, s.data, *s.model);
  ResourceSampler sampler;  // CPU, memory (and GPU) once a second until the run ends
  RunReports reports(summary, sampler, *s.transport);
  const LastWords last_words(reports, *s.transport);
  try {
    // Rank 0 writes its report before the others learn the directory, so that a rank lost now
    // still leaves a report saying so.
    const std::string created = rank == 0 ? create_run_directory(bp, options) : std::string();
    if (rank == 0) reports.open(RunDirectory::open(created));
    reports.write();
    const std::string path = worker.channel->broadcast(created);
    if (rank != 0) reports.open(RunDirectory::open(path));
    if (rank == 0) reports.run().write("blueprint.yaml", YAML::Dump(bp.resolved) + "\n");
    if (rank == 0) {
      spdlog::info("training {} ({} parameters) on {} ({} train / {} test samples), {} worker(s) x batch {}, "
                   "{} epoch(s), transport {}, BLAS core {} with {} threads -> {}",
                   s.model->name(), s.model->parameter_count(), bp.data.path, s.data.train->size(),
                   s.data.test->size(), worker.world(), bp.batch, bp.epochs, bp.transport, blas::core_name(),
                   blas::threads(), reports.run().path().string());
    }
    reports.write();
    EngineRun run = engine_run(bp, s, worker, summary, reports, sampler);
    engine.train(run);
  } catch (const std::exception& error) {
    // Several ranks: the job ends here, while the last words can still write this rank's report.
    if (worker.mpi && worker.world() > 1) end_distributed_run(error, worker, bp.comm.timeout_s);
    say_failed(reports, *s.transport, failure_reason(error));
    throw;
  }
  reports.finish("complete", "");
  if (bp.save_weights && rank == 0 && engine.dtbench_saves_weights()) {
    const auto values = s.model->arena().values();
    reports.run().write("weights.bin",
                        std::string(reinterpret_cast<const char*>(values.data()), values.size_bytes()));
  }
  if (rank == 0) print_results(bp, engine, summary, *s.model, reports);
}

void run_training(const TrainOptions& options) {
  // From the start: a signal during start-up ends the wait it interrupts with an error, not the
  // process without a word.
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  const Blueprint bp = resolve_blueprint(options);
  // A stop cancels the parameter-server calls in flight, so that a worker blocked on a server it
  // cannot reach says which one before it goes (paramserver/in_flight_calls.h).
  const CancelCallsOnStop cancel_on_stop([] { return stop_signal != 0; });
  Worker worker = join_run(bp, options);
  try {
    train_as_worker(bp, options, worker);
  } catch (const std::exception& error) {
    // Before any report exists (the data set, the model): the others still wait for this rank.
    if (worker.mpi && worker.world() > 1) end_distributed_run(error, worker, bp.comm.timeout_s);
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
  command->add_option("--local-workers", options->local_workers,
                      "Workers on this host, for the default BLAS threads (cores / workers) without mpirun "
                      "(default: --world when the parameter servers are on loopback, else 1)")
      ->check(non_negative_number());
  command->add_option("--run-dir", options->run_dir,
                      "Write the run into exactly this directory (default: a new one under the blueprint's output)");
  auto iface = std::make_shared<std::string>();
  command->add_option("--test-freeze-rank", options->freeze_rank, "Testing: this rank stops itself (SIGSTOP)")
      ->group("");
  command->add_option("--test-freeze-at", options->freeze_at,
                      "Testing: where --test-freeze-rank stops: control-channel, clock-offset, ring-chunk or "
                      "weights-checksum")
      ->group("");
  command->add_option("--iface", *iface, "Network interface for the workers' traffic (same as --set comm.iface=NAME)");
  command->callback([options, iface] {
    if (!iface->empty()) options->overrides.push_back("comm.iface=" + *iface);
    run_training(*options);
  });
}

}  // namespace dtbench
