#include "engines/dtbench/dtbench_engine.h"

#include <optional>

#include <fmt/format.h>

#include "core/profile/trace_writer.h"
#include "core/models/conv_choices.h"
#include "core/util/blas.h"

namespace dtbench {

// The transport's start (initial weights, clock offsets), the epochs, and its stop (the weights
// check): a failure anywhere in them is written into the reports by the caller, the trace closed first.
void DtbenchEngine::train(EngineRun& run) const {
  const Blueprint& bp = run.bp;
  const int rank = run.channel.rank();
  std::optional<TraceWriter> trace;
  try {
    run.transport.start(run.model);
    // Opened once the transport has measured this worker's clock against the run's reference, which
    // the trace records for `dtbench report` to merge the workers' timelines. Streamed as the run
    // goes; a run that dies leaves the events so far (an unclosed JSON array).
    if (bp.trace_steps > 0) {
      trace.emplace(run.run_dir / fmt::format("trace-{}.json", rank),
                    TraceOptions{.rank = rank, .steps_per_epoch = bp.trace_steps,
                                 .clock = run.transport.clock_alignment()});
    }
    Trainer trainer(run.model, run.train, run.test, run.transport,
                    {.epochs = bp.epochs, .max_steps = bp.steps, .show_progress = rank == 0,
                     .stop_requested = run.stop_requested,
                     .time_operators = bp.time_operators,
                     .device_marks = bp.device_marks,
                     .trace = trace ? &*trace : nullptr,
                     .compute_delay_seconds = bp.straggler.rank == rank ? bp.straggler.delay_ms / 1e3 : 0.0,
                     .eval_max_samples = bp.eval_max_samples,
                     .measure_conv_algorithms = bp.conv_algorithms == "measured"});
    // Every worker starts its first epoch together: set-up (data, connections, a server's first
    // answer) takes each its own time, and a run's throughput is counted from its first worker's
    // start (run_span.h), so a worker that began early would count the others' set-up as training.
    run.autotune_seconds = trainer.autotune();  // start-up: no timed step holds the algorithm search
    // What each convolution computes with, for the report: choices differ between machines.
    const auto choices = conv_choices(run.model, std::min(bp.batch, run.train.shard_size()));
    if (!choices.empty()) run.provenance["conv_algorithms"] = conv_choices_json(choices);
    if (run.channel.world() > 1) run.channel.barrier();
    run.training_started();
    trainer.run(run.epoch_done);
    run.transport.stop(run.model);
  } catch (...) {
    if (trace) trace->finish();
    throw;
  }
  if (trace) trace->finish();
}

std::string DtbenchEngine::provenance_line(const nlohmann::json&) const {
  return fmt::format("BLAS core {} ({})", blas::core_name(), blas::core_selection());
}

}  // namespace dtbench
