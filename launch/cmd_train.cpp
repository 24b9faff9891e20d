// dtbench train: one worker trains a blueprint's model on its data set, writes the run directory
// and prints the per-phase breakdown.
#include <csignal>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "comm/registry.h"
#include "core/data/open_dataset.h"
#include "core/models/models.h"
#include "core/train/trainer.h"
#include "core/util/blas.h"
#include "launch/blueprint.h"
#include "launch/commands.h"
#include "launch/run_directory.h"
#include "launch/run_report.h"

namespace dtbench {

namespace {

// `dtbench data synth` leaves this file beside the data, so reports can say the data is synthetic.
constexpr const char* kSyntheticMarker = "SYNTHETIC";

// Set by SIGINT / SIGTERM: the loop stops before its next step and the report says why.
volatile std::sig_atomic_t stop_signal = 0;

void request_stop(int signal) { stop_signal = signal; }

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
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

void run_training(const TrainOptions& options) {
  const Blueprint bp = resolve_blueprint(options);
  blas::set_threads(bp.threads > 0 ? bp.threads : static_cast<int>(std::thread::hardware_concurrency()));

  const DatasetPair data = open_dataset({bp.data.format, bp.data.path, bp.data.cache});
  // The model first: a data set it cannot take is the clearer error.
  Shape sample_shape = data.train->sample_shape();
  if (bp.data.resize > 0) sample_shape = {sample_shape[0], bp.data.resize, bp.data.resize};
  auto model = models::build(bp.model, sample_shape, data.train->classes());
  model->initialize(bp.seed);

  const Normalization norm = compute_normalization(*data.train);
  LoaderOptions train_options{.batch = bp.batch, .seed = bp.seed, .shuffle = true,
                              .augment = bp.data.augment, .resize = bp.data.resize};
  Loader train_loader(data.train, train_options, norm);
  // Evaluation sees every test sample once, in order, the last batch possibly smaller.
  LoaderOptions test_options = train_options;
  test_options.batch = std::min(bp.batch, data.test->size());
  test_options.shuffle = false;
  test_options.augment = false;
  test_options.drop_last = false;
  Loader test_loader(data.test, test_options, norm);
  auto transport = make_transport(bp.transport, {.optimizer = bp.optimizer});

  const RunDirectory run = RunDirectory::create(bp.output, bp.name, bp.transport);
  run.write("blueprint.yaml", YAML::Dump(bp.resolved) + "\n");
  RunSummary summary;
  summary.run_id = run.id();
  summary.transport = bp.transport;
  summary.blueprint = blueprint_json(bp.resolved);
  summary.provenance = collect_provenance();
  summary.data = data_json(bp, data);
  summary.model = {{"name", model->name()},
                   {"parameters", model->parameter_count()},
                   {"macs_per_sample", model->macs_per_sample()},
                   {"input", model->sample_input_shape()},
                   {"classes", model->classes()}};
  summary.clock_read_seconds = Profiler::clock_cost_seconds();
  auto write_report = [&] { run.write("report.json", report_json(summary).dump(2) + "\n"); };

  spdlog::info("training {} ({} parameters) on {} ({} train / {} test samples), batch {}, {} epoch(s), "
               "BLAS core {} with {} threads -> {}",
               model->name(), model->parameter_count(), bp.data.path, data.train->size(), data.test->size(),
               bp.batch, bp.epochs, blas::core_name(), blas::threads(), run.path().string());
  write_report();
  transport->start(*model);
  Trainer trainer(*model, train_loader, &test_loader, *transport,
                  {.epochs = bp.epochs, .max_steps = bp.steps,
                   .stop_requested = [] { return stop_signal != 0; }});
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  try {
    trainer.run([&](const EpochResult& epoch) {
      summary.epochs.push_back(epoch);
      summary.wall_seconds = epoch.wall_seconds;
      write_report();
      spdlog::info("epoch {}: test accuracy {:.2f}%, test loss {:.4f}, {:.0f} images/s", epoch.epoch,
                   100 * epoch.test.accuracy, epoch.test.loss, epoch.images_per_second);
    });
    transport->stop();
  } catch (const std::exception& error) {
    summary.status = "failed";
    summary.error = stop_signal != 0 ? fmt::format("{} (signal {})", error.what(), static_cast<int>(stop_signal))
                                     : error.what();
    write_report();
    throw;
  }
  summary.status = "complete";
  write_report();

  fmt::print("\n{} on {} — BLAS core {} ({}), {} threads\n", model->name(), bp.data.path,
             blas::core_name(), blas::core_selection(), blas::threads());
  fmt::print("{}\n{}", epochs_table(summary.epochs), breakdown_table(summary.epochs));
  fmt::print("\nreport: {}\n", (run.path() / "report.json").string());
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto* command = app.add_subcommand("train", "Train a blueprint's model and report the per-phase breakdown");
  auto options = std::make_shared<TrainOptions>();
  command->add_option("--config", options->config, "Blueprint YAML (default: the built-in LeNet-5 / Fashion-MNIST)");
  command->add_option("--set", options->overrides, "Override a blueprint key: --set optimizer.lr=0.1");
  command->callback([options] { run_training(*options); });
}

}  // namespace dtbench
