#pragma once
// One worker's timeline (trace-<rank>.json, see trace_file.h for the format): process `rank` named
// "worker <rank>"; on thread 0, the training loop, per traced step one span "step N" enclosing one
// per phase (load, forward, backward, comm, update); on thread 1, "comm", the pieces of the step's
// communication the transport timed (each allreduce bucket's reduction), which with overlap run
// during backward on the transport's communication thread; pieces that ran at once (the
// parameter servers' shards) on threads 2, 3, ... ("comm 2", ...) beside it, as many as overlapped.
//
// Everything is recorded at the step's end from timestamps the training loop and the transport
// already took: the writer reads no clock, and the step's events reach the file in one write.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "core/profile/comm_span.h"
#include "core/profile/trace_file.h"

namespace dtbench {

// The boundaries the training loop already measured for one step. comm and update are known only
// as durations (the transport measures them): they are laid end to end from sync_start, clamped to
// the step.
struct TraceStep {
  using TimePoint = std::chrono::steady_clock::time_point;
  TimePoint load_start, forward_start, backward_start, sync_start, step_end;
  double comm_seconds = 0.0;
  double update_seconds = 0.0;
  std::span<const CommSpan> comm_spans{};  // may start before sync_start (overlap with backward)
};

struct TraceOptions {
  int rank = 0;
  int64_t steps_per_epoch = 200;        // trace only the first this many steps of each epoch
  std::optional<ClockAlignment> clock{};  // this worker's steady clock against the run's reference
};

class TraceWriter {
 public:
  using Clock = std::chrono::steady_clock;
  // Creates (truncates) `path` and writes the process metadata. Throws IoError if it cannot.
  TraceWriter(const std::filesystem::path& path, TraceOptions options, Clock::time_point origin = Clock::now());

  // Whether step `step_in_epoch` (from 0) falls in the traced window.
  bool traces(int64_t step_in_epoch) const { return step_in_epoch < options_.steps_per_epoch; }
  // Appends the step's events and writes them to the file; a step outside the window is ignored.
  void record_step(int64_t epoch, int64_t step_in_epoch, int64_t global_step, const TraceStep& step);
  // Closes the array and the file (until then it is a valid trace missing its "]"). Idempotent.
  void finish() { file_.finish(); }

  int64_t steps_written() const { return steps_written_; }
  int64_t bytes_written() const { return file_.bytes_written(); }

 private:
  void record_comm_spans(int64_t epoch, int64_t global_step, std::span<const CommSpan> spans);

  TraceOptions options_;
  TraceEventFile file_;
  int comm_tracks_named_ = 0;  // comm threads 1, 2, ... are named when the first span for each arrives
  std::vector<std::chrono::steady_clock::time_point> comm_track_ends_;  // this step's, per comm track
  int64_t steps_written_ = 0;
};

}  // namespace dtbench
