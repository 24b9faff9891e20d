#pragma once
// One worker's timeline as a Chrome trace-event file (trace-<rank>.json; opens in Perfetto or
// chrome://tracing): process `rank` named "worker <rank>", and per traced step one complete event
// ("ph":"X") "step N" enclosing one per phase (load, forward, backward, comm, update). ts and dur are
// microseconds since the writer was made (the start of the run).
//
// Streamed: the file is a JSON array written as "[" + events joined by ",\n", the closing "]" only
// at finish() — the Trace Event Format accepts a missing one, so a crashed run leaves a usable
// file. Each step's events are formatted into a fixed buffer (no allocation per event) and written
// out with one fwrite + fflush at the step's end. The timestamps are the training loop's own clock
// reads: the writer reads no clock on the hot path.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string_view>

namespace dtbench {

// The boundaries the training loop already measured for one step. comm and update are known only
// as durations (the transport measures them): they are laid end to end from sync_start, clamped to
// the step.
struct TraceStep {
  using TimePoint = std::chrono::steady_clock::time_point;
  TimePoint load_start, forward_start, backward_start, sync_start, step_end;
  double comm_seconds = 0.0;
  double update_seconds = 0.0;
};

struct TraceOptions {
  int rank = 0;
  int64_t steps_per_epoch = 200;  // trace only the first this many steps of each epoch
};

class TraceWriter {
 public:
  using Clock = std::chrono::steady_clock;
  // Creates (truncates) `path` and writes the process metadata. Throws IoError if it cannot.
  TraceWriter(const std::filesystem::path& path, TraceOptions options, Clock::time_point origin = Clock::now());
  // Flushes what was formatted but leaves the array open, as a crash would.
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Whether step `step_in_epoch` (from 0) falls in the traced window.
  bool traces(int64_t step_in_epoch) const { return step_in_epoch < options_.steps_per_epoch; }
  // Appends the step's events and writes them to the file; a step outside the window is ignored.
  void record_step(int64_t epoch, int64_t step_in_epoch, int64_t global_step, const TraceStep& step);
  // Closes the array and the file. Later calls do nothing.
  void finish();

  int64_t steps_written() const { return steps_written_; }
  int64_t bytes_written() const { return bytes_written_; }

 private:
  void append_event(std::string_view name, int64_t start_ns, int64_t dur_ns, int64_t epoch, int64_t global_step);
  void append(std::string_view text);
  void flush();

  TraceOptions options_;
  Clock::time_point origin_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<char[]> buffer_;  // kBufferBytes, reused for every step
  size_t used_ = 0;
  int64_t steps_written_ = 0;
  int64_t bytes_written_ = 0;
};

}  // namespace dtbench
