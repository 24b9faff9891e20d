#include "core/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include "core/device/device.h"
#include "core/layers/loss.h"
#include "core/util/clock.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

using Clock = std::chrono::steady_clock;

void add_comm(SyncTimes& total, const SyncTimes& step) {
  total.comm += step.comm;
  total.hidden += step.hidden;
  total.comm_total += step.comm_total;
  total.update += step.update;
  total.wait += step.wait;
  total.transfer += step.transfer;
  total.push += step.push;
  total.pull += step.pull;
  total.d2h += step.d2h;
  total.h2d += step.h2d;
  total.bytes_sent += step.bytes_sent;
  total.bytes_received += step.bytes_received;
}

// A non-finite loss never comes back (every later step inherits the NaN weights), and a run that
// went on would end "complete" with chance accuracy: it ends here, as failed, saying where.
void require_finite(double loss, int64_t epoch, int64_t global_step) {
  if (std::isfinite(loss)) return;
  const char* what = std::isnan(loss) ? "NaN" : loss > 0 ? "inf" : "-inf";
  throw DivergedError(fmt::format("diverged: loss is {} at step {} (epoch {}); lower optimizer.lr", what,
                                  global_step, epoch));
}

// The clock reads that bound a step's phases, in order.
struct StepMarks {
  Clock::time_point load_start{}, forward_start{}, backward_start{}, sync_start{}, step_end{};
};
constexpr int kStepMarks = 5;

// The step's boundaries on the device's clock: each mark's offset from mark 0 (recorded at
// load_start, with the device idle since the previous step ended) placed after load_start.
StepMarks step_marks_on_device(Clock::time_point load_start, const std::vector<double>& offsets) {
  const auto at = [&](size_t i) {
    return load_start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(offsets.at(i)));
  };
  return {load_start, at(1), at(2), at(3), at(4)};
}

// The step's phases from its marks and the transport's split; other is what none of them covers.
StepTimes phase_times(const StepMarks& marks, const SyncTimes& sync) {
  StepTimes times;
  times[Phase::Load] = seconds_between(marks.load_start, marks.forward_start);
  times[Phase::Forward] = seconds_between(marks.forward_start, marks.backward_start);
  times[Phase::Backward] = seconds_between(marks.backward_start, marks.sync_start);
  times[Phase::Comm] = sync.comm;
  times[Phase::Update] = sync.update;
  times.total = seconds_between(marks.load_start, marks.step_end);
  times[Phase::Other] = times.total - times[Phase::Load] - times[Phase::Forward] - times[Phase::Backward] -
                        sync.comm - sync.update;
  return times;
}

void count_slowest_rank(std::vector<int64_t>& steps_per_rank, int rank) {
  if (steps_per_rank.size() <= static_cast<size_t>(rank)) steps_per_rank.resize(static_cast<size_t>(rank) + 1, 0);
  ++steps_per_rank[static_cast<size_t>(rank)];
}

// A worker made slow on purpose (straggler.delay_ms): the delay counts as compute, before backward.
void add_straggler_delay(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

[[noreturn]] void throw_stopped(int64_t epoch, int64_t step, int64_t steps_in_epoch) {
  throw std::runtime_error(fmt::format("stopped on request at epoch {}, step {} of {}", epoch, step, steps_in_epoch));
}

// The epoch's training loss, accuracy and images/s from what its steps summed.
void set_training_figures(EpochResult& result, double loss_sum, int64_t correct) {
  if (result.images == 0) return;
  result.train = {loss_sum / static_cast<double>(result.images),
                  static_cast<double>(correct) / static_cast<double>(result.images), result.images};
  result.images_per_second = static_cast<double>(result.images) / result.train_seconds;
}

// The batch sizes a loader gives: its batch, and the last, smaller one where it keeps the rest.
std::vector<int64_t> batch_sizes(const Loader& loader) {
  const LoaderOptions& o = loader.options();
  std::vector<int64_t> sizes{std::min(o.batch, loader.shard_size())};
  const int64_t rest = loader.shard_size() % o.batch;
  if (!o.drop_last && rest > 0 && loader.shard_size() > o.batch) sizes.push_back(rest);
  return sizes;
}

}  // namespace

Trainer::Trainer(Model& model, Loader& train, Loader* test, GradientSync& sync, TrainerOptions options)
    : model_(model), train_(train), test_(test), sync_(sync), options_(options) {
  DeviceBackend* device = model_.device();
  if (device != nullptr && options_.device_marks) marks_ = device->phase_marks(kStepMarks);
}

double RunClock::unix_seconds(Clock::time_point at) const { return start_unix_seconds + seconds_between(start, at); }

double Trainer::autotune() {
  if (autotuned_) return 0.0;
  autotuned_ = true;
  if (model_.device() == nullptr && !options_.measure_conv_algorithms) return 0.0;
  const auto start = Clock::now();
  std::vector<int64_t> sizes = batch_sizes(train_);
  if (test_ != nullptr) {
    for (const int64_t size : batch_sizes(*test_)) sizes.push_back(size);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  for (const int64_t size : sizes) model_.autotune(size);  // each returns once done (cuDNN's search blocks)
  return seconds_between(start, Clock::now());
}

std::vector<EpochResult> Trainer::run(const EpochObserver& observer) {
  autotune();
  std::vector<EpochResult> results;
  const RunClock clock{Clock::now(), std::chrono::duration<double>(
                                         std::chrono::system_clock::now().time_since_epoch()).count()};
  auto last_mark = clock.start;
  int64_t global_step = 0;
  for (int64_t epoch = 1; epoch <= options_.epochs; ++epoch) {
    if (options_.max_steps > 0 && global_step >= options_.max_steps) break;
    const auto epoch_start = last_mark;  // the previous epoch's end: its reports are this epoch's gap
    const auto training_start = Clock::now();
    EpochResult result = train_epoch(epoch, global_step, last_mark);
    result.start_unix_seconds = clock.unix_seconds(training_start);
    evaluate_epoch(result, clock, epoch_start, last_mark);
    if (observer) observer(result);
    results.push_back(std::move(result));
  }
  return results;
}

void Trainer::evaluate_epoch(EpochResult& result, const RunClock& clock, Clock::time_point epoch_start,
                             Clock::time_point& last_mark) {
  result.steps_end_unix_seconds = clock.unix_seconds(last_mark);
  const auto evaluation_start = Clock::now();
  if (test_ != nullptr) result.test = evaluate(*test_);
  const auto evaluation_end = Clock::now();
  result.between_seconds += seconds_between(last_mark, evaluation_start);
  result.evaluation_seconds = seconds_between(evaluation_start, evaluation_end);
  result.span_seconds = seconds_between(epoch_start, evaluation_end);
  result.wall_seconds = seconds_between(clock.start, evaluation_end);
  result.end_unix_seconds = clock.unix_seconds(evaluation_end);
  // The observer's time (reports, the gather) is the next epoch's first gap between steps.
  last_mark = evaluation_end;
}

EpochResult Trainer::train_epoch(int64_t epoch, int64_t& global_step, Clock::time_point& last_mark) {
  EpochResult result;
  result.epoch = epoch;
  profiler_.begin_epoch(epoch);
  train_.start_epoch(epoch);
  operator_times_.clear();
  comm_timings_.clear();
  model_.set_operator_times(options_.time_operators ? &operator_times_ : nullptr);
  const int64_t steps_in_epoch = train_.batches_per_epoch();
  // What this epoch will run: all its batches, or what is left of `steps`.
  const int64_t steps_to_run =
      options_.max_steps > 0 ? std::clamp<int64_t>(options_.max_steps - global_step, 0, steps_in_epoch) : steps_in_epoch;
  double loss_sum = 0.0;
  int64_t correct = 0;
  auto last_progress = Clock::now();

  for (int64_t step = 0;; ++step) {
    if (options_.max_steps > 0 && global_step >= options_.max_steps) break;
    if (options_.stop_requested && options_.stop_requested()) throw_stopped(epoch, step, steps_in_epoch);
    const auto load_start = Clock::now();
    if (marks_) marks_->record(0);
    const Batch* batch = train_.next();
    if (batch == nullptr) break;  // the end of the data: this wait is counted before evaluation
    result.between_seconds += seconds_between(last_mark, load_start);
    StepMarks marks{.load_start = load_start, .forward_start = phase_mark(1)};
    const Tensor& logits = model_.forward(batch->images, Mode::Train);
    const LossResult loss = model_.loss(logits, batch->labels, &grad_logits_);
    require_finite(loss.loss, epoch, global_step);
    add_straggler_delay(options_.compute_delay_seconds);
    marks.backward_start = phase_mark(2);
    model_.backward(grad_logits_);
    marks.sync_start = phase_mark(3);
    // The transport times comm on the host's clock, and may read the gradients from another
    // stream or the host: backward's work is done before it starts.
    if (marks_) model_.device()->synchronize();
    const SyncTimes sync = sync_.finish_step(model_, global_step);
    marks.step_end = phase_mark(4);
    if (marks_) marks = step_marks_on_device(load_start, marks_->seconds_from_first());
    last_mark = marks.step_end;

    const StepTimes times = phase_times(marks, sync);
    profiler_.record(times);
    if (options_.trace != nullptr) {
      options_.trace->record_step(epoch, step, global_step,
                                  {marks.load_start, marks.forward_start, marks.backward_start, marks.sync_start,
                                   marks.step_end, sync.comm, sync.update, sync.spans});
    }
    comm_timings_.record(marks.backward_start, sync.spans);
    add_comm(result.sync_total, sync);
    if (sync.slowest_rank >= 0) count_slowest_rank(result.slowest_rank_steps, sync.slowest_rank);

    const auto batch_size = static_cast<int64_t>(batch->labels.size());
    loss_sum += loss.loss * static_cast<double>(batch_size);
    correct += loss.correct;
    result.images += batch_size;
    result.train_seconds += times.total;
    ++global_step;

    if (options_.show_progress &&
        seconds_between(last_progress, marks.step_end) >= options_.progress_interval_seconds) {
      last_progress = marks.step_end;
      show_progress(epoch, step + 1, steps_to_run, result,
                    {loss_sum / static_cast<double>(result.images),
                     static_cast<double>(correct) / static_cast<double>(result.images), result.images});
    }
  }
  model_.set_operator_times(nullptr);  // evaluation is not a training step
  result.phases = profiler_.end_epoch();
  result.steps = profiler_.steps();
  result.operators = operator_times_.by_kind();
  result.comm_timings = comm_timings_.means();
  set_training_figures(result, loss_sum, correct);
  return result;
}

Clock::time_point Trainer::phase_mark(int index) const {
  if (marks_) {
    marks_->record(index);
  } else if (DeviceBackend* device = model_.device()) {
    device->synchronize();
  }
  return Clock::now();
}

Evaluation Trainer::evaluate(Loader& loader) {
  loader.start_epoch(0);
  double loss_sum = 0.0;
  int64_t correct = 0, samples = 0;
  while (const Batch* batch = loader.next()) {
    const auto limit = options_.eval_max_samples;
    if (limit > 0 && samples + static_cast<int64_t>(batch->labels.size()) > limit) break;
    const LossResult loss = model_.loss(model_.forward(batch->images, Mode::Eval), batch->labels, nullptr);
    const auto batch_size = static_cast<int64_t>(batch->labels.size());
    loss_sum += loss.loss * static_cast<double>(batch_size);
    correct += loss.correct;
    samples += batch_size;
  }
  if (samples == 0) return {};
  return {loss_sum / static_cast<double>(samples),
          static_cast<double>(correct) / static_cast<double>(samples), samples};
}

void Trainer::show_progress(int64_t epoch, int64_t steps_done, int64_t steps_to_run, const EpochResult& so_far,
                            const Evaluation& running) {
  const double images_per_second = static_cast<double>(so_far.images) / so_far.train_seconds;
  const double eta_seconds =
      static_cast<double>(steps_to_run - steps_done) * so_far.train_seconds / static_cast<double>(steps_done);
  spdlog::info("epoch {}/{} step {}/{}  loss {:.4f}  acc {:.2f}%  {:.0f} img/s  ETA {:.0f}s", epoch, options_.epochs,
               steps_done, steps_to_run, running.loss, 100.0 * running.accuracy, images_per_second, eta_seconds);
}

}  // namespace dtbench
