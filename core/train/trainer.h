#pragma once
// The training loop: load, forward (with the loss), backward, then "finish this step" on whatever
// synchronises gradients. Every step's phases go to the profiler; after each epoch the model is
// evaluated on the test set and the epoch's result handed to an observer (which writes reports, so
// a run that fails later still leaves what it completed).
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/data/loader.h"
#include "core/device/device.h"
#include "core/models/model.h"
#include "core/profile/comm_timings.h"
#include "core/profile/profiler.h"
#include "core/profile/trace_writer.h"
#include "core/train/gradient_sync.h"

namespace dtbench {

struct TrainerOptions {
  int64_t epochs = 1;
  int64_t max_steps = 0;              // stop after this many steps in total; 0: whole epochs
  double progress_interval_seconds = 2.0;
  bool show_progress = true;          // one worker (rank 0) shows progress
  // Asked before every step; true ends the run with an error (a signal arrived, say).
  std::function<bool()> stop_requested;
  bool time_operators = false;        // per-operator forward/backward times in each epoch's result
  // With the model on a device whose backend gives phase marks: time the phases by marks recorded
  // on the device's queue (true), or by waiting for the device at every phase boundary (false;
  // what the marks save is measured this way).
  bool device_marks = true;
  TraceWriter* trace = nullptr;       // if set: each step's phases (in its window) as trace events
  // An injected straggler: this worker sleeps this long in every step's forward phase. Before
  // backward, so that with overlap every gradient bucket (not just the last) arrives late.
  double compute_delay_seconds = 0.0;
  // Evaluation stops before a batch that would take it past this many test samples; 0: all.
  int64_t eval_max_samples = 0;
  // On the host: choose each convolution's algorithms by measuring them at the run's batch sizes
  // before the first step (core/tuning/conv_tuning.h), rather than by the fixed rules.
  bool measure_conv_algorithms = false;
};

struct Evaluation {
  double loss = 0.0;
  double accuracy = 0.0;
  int64_t samples = 0;
};

struct EpochResult {
  int64_t epoch = 0;  // from 1
  EpochPhases phases;
  SyncTimes sync_total;            // comm split summed over the epoch's steps
  std::vector<int64_t> slowest_rank_steps;  // per rank: steps at which it arrived last
  std::map<std::string, OperatorTime> operators;  // training steps only; empty unless timed
  Evaluation train;                // running loss and accuracy over the epoch's batches
  Evaluation test;
  int64_t images = 0;              // trained on by this worker
  double train_seconds = 0.0;      // sum of step times
  double images_per_second = 0.0;  // images / train_seconds: this worker's step rate
  double wall_seconds = 0.0;       // since training started, at the end of this epoch's evaluation
  std::vector<StepTimes> steps;    // every step's phases, for exact percentiles over several epochs
  std::vector<CommTiming> comm_timings;  // each comm piece's mean ready, start and end in a step
  // The epoch's share of the training wall time, split so that nothing goes uncounted:
  // span = train_seconds (the steps) + between_seconds + evaluation_seconds. Between is every gap
  // outside a step and the evaluation: trace writing, progress lines, the loader's start of the
  // epoch, and the previous epoch's reports (the epoch's span starts where the last one ended).
  double span_seconds = 0.0;
  double between_seconds = 0.0;
  double evaluation_seconds = 0.0;
  // System-clock times (seconds since 1970), comparable across this host's workers: the epoch's
  // training began (after the previous epoch's reports), its last step ended, its evaluation ended.
  double start_unix_seconds = 0.0;
  double steps_end_unix_seconds = 0.0;
  double end_unix_seconds = 0.0;
};

using EpochObserver = std::function<void(const EpochResult&)>;

// The training's start on the steady clock and on the system clock, read together once: later
// system-clock times are the start's plus steady seconds, so they never step back with the clock.
struct RunClock {
  std::chrono::steady_clock::time_point start;
  double start_unix_seconds = 0.0;
  double unix_seconds(std::chrono::steady_clock::time_point at) const;
};

class Trainer {
 public:
  Trainer(Model& model, Loader& train, Loader* test, GradientSync& sync, TrainerOptions options);
  // With the model on a device, or with measure_conv_algorithms on the host: every layer's
  // autotune (cuDNN's algorithm search; the host's convolution timing) for each batch size
  // training and evaluation will use, before any step, so that no timed step holds it.
  // Returns its seconds (0 when there was none). run() does it first unless it was done; the train command
  // does it before training starts and reports it apart (start-up, autotune_seconds).
  double autotune();
  // Runs the epochs; calls `observer` after each one. Returns all epochs' results.
  std::vector<EpochResult> run(const EpochObserver& observer);
  Evaluation evaluate(Loader& loader);

 private:
  // `last_mark` is where the timeline was last accounted for (a step's end): the gap from it to
  // the next step's start is time between steps. It ends at the epoch's last step.
  EpochResult train_epoch(int64_t epoch, int64_t& global_step, std::chrono::steady_clock::time_point& last_mark);
  // The epoch's evaluation and its place on the timeline, from `epoch_start` to the evaluation's end.
  void evaluate_epoch(EpochResult& result, const RunClock& clock, std::chrono::steady_clock::time_point epoch_start,
                      std::chrono::steady_clock::time_point& last_mark);
  // One progress line: steps done of those this epoch runs (all its batches, or what `steps`
  // leaves), running loss and accuracy, images/s and the time left.
  void show_progress(int64_t epoch, int64_t steps_done, int64_t steps_to_run, const EpochResult& so_far,
                     const Evaluation& running);
  // The clock at phase boundary `index` (0 load, 1 forward, 2 backward, 3 sync, 4 step end). A
  // phase ends when its work is done, not when the host queued it: with the model on a device
  // whose backend gives phase marks, mark `index` is recorded on the device's queue (the step's
  // times are then read from the marks, step_times_on_device); without marks, the clock is read
  // once the device has finished what was queued.
  std::chrono::steady_clock::time_point phase_mark(int index) const;

  Model& model_;
  Loader& train_;
  Loader* test_;
  GradientSync& sync_;
  TrainerOptions options_;
  Profiler profiler_;
  Tensor grad_logits_;
  OperatorTimes operator_times_;
  CommTimings comm_timings_;
  std::unique_ptr<PhaseMarks> marks_;  // the device's, when it times phases on its own clock
  bool autotuned_ = false;
};

}  // namespace dtbench
