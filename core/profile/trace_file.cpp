#include "core/profile/trace_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/util/error.h"

namespace dtbench {

namespace {

// Many events' worth: a step of a dozen events of ~150 bytes fits many times over.
constexpr size_t kBufferBytes = 16 * 1024;
// An event is formatted on the stack in a buffer this large (fmt spills to the heap only beyond it,
// which our short names and few arguments never reach).
constexpr size_t kEventInlineBytes = 512;

int64_t nanoseconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
}

// Where `origin` lies: on the system clock (taken now, next to a steady reading, and carried
// back to the origin), on the steady clock, and against the reference clock if one was measured.
nlohmann::json clock_record(TraceEventFile::Clock::time_point origin, const std::optional<ClockAlignment>& alignment) {
  const auto steady_now = TraceEventFile::Clock::now();
  const auto system_now = std::chrono::system_clock::now();
  const int64_t origin_unix_ns = nanoseconds(system_now.time_since_epoch()) - nanoseconds(steady_now - origin);
  nlohmann::json clock = {{"origin_unix_ns", origin_unix_ns},
                          {"origin_steady_ns", nanoseconds(origin.time_since_epoch())}};
  if (alignment) {
    clock["reference"] = alignment->reference;
    clock["offset_ns"] = static_cast<int64_t>(alignment->offset_seconds * 1e9);
    clock["uncertainty_ns"] = static_cast<int64_t>(alignment->uncertainty_seconds * 1e9);
    clock["method"] = alignment->method;
  } else {
    clock["reference"] = kTraceSystemClock;
    clock["method"] = "system_clock read at the origin: placed among other traces only as well as the hosts' "
                      "clocks agree (NTP)";
  }
  return clock;
}

}  // namespace

TraceEventFile::TraceEventFile(const std::filesystem::path& path, const TraceProcess& process,
                               Clock::time_point origin)
    : pid_(process.pid), origin_(origin), buffer_(new char[kBufferBytes]) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw IoError(fmt::format("cannot write trace {}: {}", path.string(), std::strerror(errno)));
  std::setvbuf(file_, nullptr, _IONBF, 0);  // buffer_ is the buffer: one write per flush
  const nlohmann::json name_args = {{"name", process.name}, {"clock", clock_record(origin, process.clock)}};
  append(fmt::format(
      "[\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{0},\"tid\":0,\"args\":{1}}},\n"
      "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{0},\"tid\":0,\"args\":{{\"sort_index\":{0}}}}}",
      pid_, name_args.dump()));
  flush();
}

TraceEventFile::~TraceEventFile() {
  if (file_ == nullptr) return;
  flush();
  std::fclose(file_);
}

void TraceEventFile::name_thread(int tid, std::string_view name) {
  append(fmt::format(",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}",
                     pid_, tid, nlohmann::json(name).dump()));
}

// {"name":..,"ph":"X","pid":..,"tid":..,"ts":µs,"dur":µs,"args":{..}}, ts and dur written from
// integer nanoseconds as microseconds with three decimals (exact, and merge-friendly).
void TraceEventFile::complete(int tid, std::string_view name, Clock::time_point start, Clock::time_point end,
                              std::initializer_list<TraceArg> args) {
  if (file_ == nullptr) return;
  const int64_t start_ns = std::max<int64_t>(0, nanoseconds(start - origin_));
  const int64_t dur_ns = std::max<int64_t>(0, nanoseconds(end - origin_) - start_ns);
  fmt::basic_memory_buffer<char, kEventInlineBytes> event;
  auto out = std::back_inserter(event);
  fmt::format_to(out,
                 ",\n{{\"name\":\"{}\",\"ph\":\"X\",\"pid\":{},\"tid\":{},"
                 "\"ts\":{}.{:03},\"dur\":{}.{:03},\"args\":{{",
                 name, pid_, tid, start_ns / 1000, start_ns % 1000, dur_ns / 1000, dur_ns % 1000);
  const char* separator = "";
  for (const TraceArg& arg : args) {
    fmt::format_to(out, "{}\"{}\":{}", separator, arg.key, arg.value);
    separator = ",";
  }
  fmt::format_to(out, "}}}}");
  append({event.data(), event.size()});
}

void TraceEventFile::append(std::string_view text) {
  if (file_ == nullptr) return;
  if (text.size() > kBufferBytes - used_) flush();  // whole events per write, as far as they fit
  for (size_t done = 0; done < text.size();) {
    if (used_ == kBufferBytes) flush();
    const size_t n = std::min(text.size() - done, kBufferBytes - used_);
    std::memcpy(buffer_.get() + used_, text.data() + done, n);
    used_ += n;
    done += n;
  }
}

void TraceEventFile::flush() {
  if (file_ == nullptr || used_ == 0) return;
  const size_t written = std::fwrite(buffer_.get(), 1, used_, file_);
  std::fflush(file_);
  if (written != used_) spdlog::warn("trace file: wrote {} of {} bytes", written, used_);
  bytes_written_ += static_cast<int64_t>(written);
  used_ = 0;
}

void TraceEventFile::finish() {
  if (file_ == nullptr) return;
  append("\n]\n");
  flush();
  if (std::fclose(file_) != 0) spdlog::warn("closing the trace file failed: {}", std::strerror(errno));
  file_ = nullptr;
}

}  // namespace dtbench
