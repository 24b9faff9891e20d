#include "core/profile/trace_writer.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/profile/phases.h"
#include "core/util/clock.h"

namespace dtbench {

namespace {

constexpr int kLoopThread = 0;
constexpr int kCommThread = 1;

// "allreduce bucket 3 (4.0 MiB)", "pull (1.2 MiB)" (no index), "wait" (nor bytes), into `out`;
// returns the text written.
std::string_view span_name(const CommSpan& span, std::span<char> out) {
  constexpr double kKiB = 1024.0, kMiB = 1024.0 * kKiB;
  const auto bytes = static_cast<double>(span.bytes);
  const double scale = bytes >= kMiB ? kMiB : bytes >= kKiB ? kKiB : 1.0;
  const char* unit = scale == kMiB ? "MiB" : scale == kKiB ? "KiB" : "B";
  auto end = fmt::format_to_n(out.data(), out.size(), "{}", span.what).out;
  if (span.index >= 0) end = fmt::format_to_n(end, out.data() + out.size() - end, " {}", span.index).out;
  if (span.bytes > 0) end = fmt::format_to_n(end, out.data() + out.size() - end, " ({:.1f} {})", bytes / scale, unit).out;
  return {out.data(), static_cast<size_t>(std::min<std::ptrdiff_t>(end - out.data(), std::ssize(out)))};
}

}  // namespace

TraceWriter::TraceWriter(const std::filesystem::path& path, TraceOptions options, Clock::time_point origin)
    : options_(std::move(options)),
      file_(path, {.pid = options_.rank, .name = fmt::format("worker {}", options_.rank), .clock = options_.clock},
            origin) {
  file_.name_thread(kLoopThread, "training loop");
  file_.flush();
}

void TraceWriter::record_step(int64_t epoch, int64_t step_in_epoch, int64_t global_step, const TraceStep& step) {
  if (!traces(step_in_epoch)) return;
  // comm then update, end to end after backward, never past the step's end.
  const auto comm_end = std::min(step.step_end, step.sync_start + to_duration(std::max(0.0, step.comm_seconds)));
  const auto update_end = std::min(step.step_end, comm_end + to_duration(std::max(0.0, step.update_seconds)));

  char name[32];
  const auto step_name = fmt::format_to_n(name, sizeof(name), "step {}", global_step);
  const std::initializer_list<TraceArg> args = {{"epoch", epoch}, {"step", global_step}};
  file_.complete(kLoopThread, {name, std::min(step_name.size, sizeof(name))}, step.load_start, step.step_end, args);
  file_.complete(kLoopThread, phase_name(Phase::Load), step.load_start, step.forward_start, args);
  file_.complete(kLoopThread, phase_name(Phase::Forward), step.forward_start, step.backward_start, args);
  file_.complete(kLoopThread, phase_name(Phase::Backward), step.backward_start, step.sync_start, args);
  file_.complete(kLoopThread, phase_name(Phase::Comm), step.sync_start, comm_end, args);
  file_.complete(kLoopThread, phase_name(Phase::Update), comm_end, update_end, args);
  record_comm_spans(epoch, global_step, step.comm_spans);
  ++steps_written_;
  file_.flush();
}

void TraceWriter::record_comm_spans(int64_t epoch, int64_t global_step, std::span<const CommSpan> spans) {
  // Pieces that ran at once (the parameter servers' shards) would overlap on one track, which a
  // trace viewer cannot draw: each piece goes on the first comm track free by its start, so pieces
  // one after another (the allreduce buckets) stay on one.
  comm_track_ends_.clear();
  char name[64];
  for (const CommSpan& span : spans) {
    size_t track = 0;
    while (track < comm_track_ends_.size() && comm_track_ends_[track] > span.start) ++track;
    if (track == comm_track_ends_.size()) comm_track_ends_.push_back(span.end);
    comm_track_ends_[track] = span.end;
    const int tid = kCommThread + static_cast<int>(track);
    if (static_cast<int>(track) >= comm_tracks_named_) {
      file_.name_thread(tid, track == 0 ? std::string("comm") : fmt::format("comm {}", track + 1));
      comm_tracks_named_ = static_cast<int>(track) + 1;
    }
    file_.complete(tid, span_name(span, name), span.start, span.end,
                   {{"epoch", epoch}, {"step", global_step}, {"bytes", span.bytes}});
  }
}

}  // namespace dtbench
