#include "core/profile/trace_writer.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/profile/phases.h"
#include "core/util/error.h"

namespace dtbench {

namespace {

// One step is six events of about 150 bytes; the buffer holds many, and is flushed early if full.
constexpr size_t kBufferBytes = 16 * 1024;
constexpr size_t kEventMaxBytes = 256;

int64_t nanoseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

int64_t seconds_to_ns(double seconds) { return static_cast<int64_t>(seconds * 1e9); }

}  // namespace

TraceWriter::TraceWriter(const std::filesystem::path& path, TraceOptions options, Clock::time_point origin)
    : options_(options), origin_(origin), buffer_(new char[kBufferBytes]) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw IoError(fmt::format("cannot write trace {}: {}", path.string(), std::strerror(errno)));
  std::setvbuf(file_, nullptr, _IONBF, 0);  // buffer_ is the buffer: one write per flush
  // Metadata first: the process and its one thread get names in the viewer.
  append(fmt::format(
      "[\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{0},\"tid\":0,\"args\":{{\"name\":\"worker {0}\"}}}},\n"
      "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{0},\"tid\":0,\"args\":{{\"sort_index\":{0}}}}},\n"
      "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{0},\"tid\":0,\"args\":{{\"name\":\"training loop\"}}}}",
      options_.rank));
  flush();
}

TraceWriter::~TraceWriter() {
  if (file_ == nullptr) return;
  flush();
  std::fclose(file_);
}

void TraceWriter::record_step(int64_t epoch, int64_t step_in_epoch, int64_t global_step, const TraceStep& step) {
  if (file_ == nullptr || !traces(step_in_epoch)) return;
  const int64_t load = nanoseconds(step.load_start - origin_);
  const int64_t forward = nanoseconds(step.forward_start - origin_);
  const int64_t backward = nanoseconds(step.backward_start - origin_);
  const int64_t sync = nanoseconds(step.sync_start - origin_);
  const int64_t end = nanoseconds(step.step_end - origin_);
  // comm then update, end to end after backward, never past the step's end.
  const int64_t comm_end = std::min(end, sync + std::max<int64_t>(0, seconds_to_ns(step.comm_seconds)));
  const int64_t update_end = std::min(end, comm_end + std::max<int64_t>(0, seconds_to_ns(step.update_seconds)));

  char name[32];
  const auto step_name = fmt::format_to_n(name, sizeof(name), "step {}", global_step);
  append_event({name, step_name.size}, load, end - load, epoch, global_step);
  append_event(phase_name(Phase::Load), load, forward - load, epoch, global_step);
  append_event(phase_name(Phase::Forward), forward, backward - forward, epoch, global_step);
  append_event(phase_name(Phase::Backward), backward, sync - backward, epoch, global_step);
  append_event(phase_name(Phase::Comm), sync, comm_end - sync, epoch, global_step);
  append_event(phase_name(Phase::Update), comm_end, update_end - comm_end, epoch, global_step);
  ++steps_written_;
  flush();
}

void TraceWriter::finish() {
  if (file_ == nullptr) return;
  append("\n]\n");
  flush();
  if (std::fclose(file_) != 0) spdlog::warn("closing the trace file failed: {}", std::strerror(errno));
  file_ = nullptr;
}

// {"name":..,"cat":"step","ph":"X","pid":rank,"tid":0,"ts":µs,"dur":µs,"args":{..}}, with ts and dur
// written from integer nanoseconds as microseconds with three decimals.
void TraceWriter::append_event(std::string_view name, int64_t start_ns, int64_t dur_ns, int64_t epoch,
                               int64_t global_step) {
  if (kBufferBytes - used_ < kEventMaxBytes) flush();
  start_ns = std::max<int64_t>(0, start_ns);
  dur_ns = std::max<int64_t>(0, dur_ns);
  const auto result = fmt::format_to_n(
      buffer_.get() + used_, kBufferBytes - used_,
      ",\n{{\"name\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":0,\"ts\":{}.{:03},\"dur\":{}.{:03},"
      "\"args\":{{\"epoch\":{},\"step\":{}}}}}",
      name, options_.rank, start_ns / 1000, start_ns % 1000, dur_ns / 1000, dur_ns % 1000, epoch, global_step);
  used_ += std::min(result.size, kBufferBytes - used_);
}

void TraceWriter::append(std::string_view text) {
  for (size_t done = 0; done < text.size();) {
    if (used_ == kBufferBytes) flush();
    const size_t n = std::min(text.size() - done, kBufferBytes - used_);
    std::memcpy(buffer_.get() + used_, text.data() + done, n);
    used_ += n;
    done += n;
  }
}

// Hands the buffer to the kernel, so a crash after this loses nothing already recorded.
void TraceWriter::flush() {
  if (file_ == nullptr || used_ == 0) return;
  const size_t written = std::fwrite(buffer_.get(), 1, used_, file_);
  std::fflush(file_);
  if (written != used_) spdlog::warn("trace file: wrote {} of {} bytes", written, used_);
  bytes_written_ += static_cast<int64_t>(written);
  used_ = 0;
}

}  // namespace dtbench
