// dtbench bench step: the time of one training step's forward (with the loss), backward and
// optimizer update for a model at a batch size, on random data: warm-up steps first, then the
// median of the timed steps.
#include "launch/bench/step.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/models/conv_choices.h"
#include "core/layers/loss.h"
#include "core/models/models.h"
#include "core/optim/optimizer.h"
#include "core/device/device.h"
#include "core/util/blas.h"
#include "core/util/error.h"
#include "core/util/rng.h"
#include "launch/monitor/provenance.h"
#include "launch/bench/step_dump.h"
#include "launch/blueprint/number_option.h"
#include "launch/blueprint/shape_option.h"

namespace dtbench {

namespace {

struct StepBenchOptions {
  std::string model = "lenet5";
  int64_t batch = 64;
  int64_t steps = 20;
  int64_t warmup = 3;
  int threads = 0;
  int64_t classes = 10;
  std::string input;
  std::string device = "cpu";
  std::string precision = "fp32";
  std::string dump_dir;  // --dump-step: write one step's inputs and gradients here instead of timing
  std::string conv_algorithms = "measured";  // measured | rules (core/tuning/conv_tuning.h)
  bool explain = false;  // --explain: each convolution's shape and algorithms, with what was timed
};

// Each host convolution's algorithms and the times they were chosen by (rules: only the rules').
void explain_convolutions(const Model& model, int64_t batch) {
  const std::vector<LayerConvChoice> choices = conv_choices(model, batch);
  for (const LayerConvChoice& c : choices) {
    fmt::print("  {:<22} {:<32} {}\n", c.layer, conv_shape_text(c.sizes),
               c.measured ? conv_tuning_text(c.tuning) : fmt::format("{} (rules)", conv_algorithm_name(c.tuning.rule)));
  }
  if (!choices.empty()) fmt::print("  convolutions {}\n", conv_choices_summary(choices));
}

double median_ms(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return seconds.empty() ? 0.0 : 1e3 * seconds[seconds.size() / 2];
}

// On a device, each phase ends when the device has done its work (the loss and the optimizer wait
// for it; backward is waited for here), so the host's clock reads bound each phase's device work.
void bench_one_model(const models::ModelEntry& entry, const StepBenchOptions& options, DeviceBackend* device) {
  using Clock = std::chrono::steady_clock;
  const Shape input = options.input.empty() ? entry.default_input : parse_shape_option("--input", options.input);
  auto model = models::build(entry.name, input, options.classes, device);
  model->initialize(1);
  Shape batch_shape = input;
  batch_shape.insert(batch_shape.begin(), options.batch);
  Tensor images(batch_shape);
  Rng rng(7);
  for (float& x : images.span()) x = rng.normal();
  std::vector<int32_t> labels(static_cast<size_t>(options.batch));
  for (auto& label : labels) label = static_cast<int32_t>(rng.below(static_cast<uint64_t>(options.classes)));
  if (!options.dump_dir.empty()) {
    dump_step(*model, images, labels, options.dump_dir);
    fmt::print("{:<10} {:>6}  one step's weights, input, labels and gradients written to {}\n", entry.name,
               options.batch, options.dump_dir);
    return;
  }
  if (options.conv_algorithms == "measured" && device == nullptr) model->autotune(options.batch);
  const OptimizerConfig sgd{.name = "sgd", .learning_rate = 0.01f, .momentum = 0.9f};
  std::unique_ptr<Optimizer> optimizer = device != nullptr ? device->make_optimizer(sgd, model->arena().count()) : nullptr;
  if (optimizer == nullptr) optimizer = make_optimizer(sgd, model->arena().count());

  Tensor grad_logits;
  std::vector<double> forward, backward, update;
  auto seconds = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); };
  for (int64_t step = 0; step < options.warmup + options.steps; ++step) {
    const auto t0 = Clock::now();
    model->loss(model->forward(images, Mode::Train), labels, &grad_logits);
    const auto t1 = Clock::now();
    model->backward(grad_logits);
    if (device != nullptr) device->synchronize();
    const auto t2 = Clock::now();
    optimizer->step(model->arena().values(), model->arena().grads());
    const auto t3 = Clock::now();
    if (step < options.warmup) continue;
    forward.push_back(seconds(t0, t1));
    backward.push_back(seconds(t1, t2));
    update.push_back(seconds(t2, t3));
  }
  const double f = median_ms(forward), b = median_ms(backward), u = median_ms(update);
  fmt::print("{:<10} {:>6} {:>11.3f} {:>12.3f} {:>10.3f} {:>10.3f} {:>10.1f} {:>12.1f}\n", entry.name,
             options.batch, f, b, u, f + b + u, 1e3 * static_cast<double>(options.batch) / (f + b + u),
             static_cast<double>(peak_resident_bytes()) / (1 << 20));
  if (options.explain && device == nullptr) explain_convolutions(*model, options.batch);
}

}  // namespace

void add_step_bench(CLI::App& bench) {
  auto* command = bench.add_subcommand("step", "Forward, backward and update time of one training step");
  auto options = std::make_shared<StepBenchOptions>();
  command->add_option("--model", options->model, "Model name, or 'all'");
  command->add_option("--batch", options->batch, "Batch size")->check(positive_number());
  command->add_option("--steps", options->steps, "Timed steps (the median is reported)")->check(positive_number());
  command->add_option("--warmup", options->warmup, "Untimed steps first")->check(non_negative_number());
  command->add_option("--threads", options->threads, "BLAS threads (0: one per core)")->check(non_negative_number());
  command->add_option("--classes", options->classes, "Number of classes")->check(positive_number());
  command->add_option("--input", options->input, "Input shape CxHxW (default: the model's own)");
  command->add_option("--device", options->device, "Where the step runs: cpu, or cuda (the first GPU)");
  command->add_option("--precision", options->precision,
                      "fp32, or tf32 (a GPU's TF32 tensor cores for convolutions and matrix products)");
  command->add_option("--conv-algorithms", options->conv_algorithms,
                      "The host's convolution algorithms: measured (each shape's fastest, timed before the steps "
                      "or read from the machine's tuning cache) or rules (the fixed choice)")
      ->check(CLI::IsMember({"measured", "rules"}));
  command->add_flag("--explain", options->explain,
                    "After each model's line: every convolution's shape and algorithms, and the times they were "
                    "chosen by");
  command->add_option("--dump-step", options->dump_dir,
                      "Instead of timing: write one step's weights, input, labels and gradients to this folder "
                      "(scripts/fp64_step_check.py)");
  command->callback([options] {
    if (options->threads > 0) blas::set_threads(options->threads);
    check_device_name(options->device, "--device");
    const Precision precision = parse_precision(options->precision, "--precision");
    if (options->device == "cpu") check_host_precision(precision, "--precision");
    if (!options->dump_dir.empty() && (options->device != "cpu" || options->model == "all")) {
      fail_input("--dump-step: one model on the cpu (--model NAME --device cpu), got --model {} --device {}",
                 options->model, options->device);
    }
    const std::unique_ptr<DeviceBackend> device = open_device(options->device, 0, precision);
    fmt::print("BLAS core {}, {} threads{}, precision {}, convolutions {}; median of {} steps after {} warm-up\n",
               blas::core_name(), blas::threads(),
               device != nullptr ? ", device " + device_text(device->properties()) : "", precision_name(precision),
               device != nullptr ? "by the device's search" : options->conv_algorithms, options->steps, options->warmup);
    fmt::print("{:<10} {:>6} {:>11} {:>12} {:>10} {:>10} {:>10} {:>12}\n", "model", "batch", "forward ms",
               "backward ms", "update ms", "step ms", "images/s", "peak RSS MiB");
    bool found = false;
    for (const auto& entry : models::catalogue()) {
      if (options->model != "all" && options->model != entry.name) continue;
      found = true;
      bench_one_model(entry, *options, device.get());
    }
    if (!found) {
      models::build(options->model, {1, 28, 28}, options->classes);  // throws, naming the valid models
    }
  });
}

}  // namespace dtbench
