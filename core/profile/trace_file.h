#pragma once
// A Chrome trace-event file (opens in Perfetto or chrome://tracing) written as the program runs:
// one process with named threads, complete events ("ph":"X") whose ts and dur are microseconds
// since the file's origin.
//
// Streamed: the file is a JSON array written as "[" + events joined by ",\n", one event per line,
// the closing "]" only at finish() — the Trace Event Format accepts a missing one, so a crashed
// program leaves a usable file (and a torn last line is easy to drop: see launch/report/trace_merge.h).
// Events are formatted into a fixed buffer (no allocation per event) and reach the file at flush(),
// one fwrite + fflush, which the caller places off its critical path (a step's end, say).
//
// So that files from several processes and hosts can be merged onto one time axis, the
// process_name event carries under args.clock where the origin lies: on the system clock (always),
// on the steady clock, and, when a transport measured it, the offset to the run's reference clock.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/profile/clock_alignment.h"

namespace dtbench {

// args.clock.reference of a trace placed by its system clock alone (no measured offset).
inline constexpr const char* kTraceSystemClock = "system clock";

struct TraceProcess {
  int pid = 0;
  std::string name;                     // "worker 3", "server 0"
  std::optional<ClockAlignment> clock{};  // none: only the system clock places this trace among others
};

// An integer argument of an event, shown in the viewer's details pane.
struct TraceArg {
  std::string_view key;
  int64_t value = 0;
};

class TraceEventFile {
 public:
  using Clock = std::chrono::steady_clock;
  // Creates (truncates) `path` and writes the process metadata. Throws IoError if it cannot.
  TraceEventFile(const std::filesystem::path& path, const TraceProcess& process, Clock::time_point origin);
  // Flushes what was formatted but leaves the array open, as a crash would.
  ~TraceEventFile();
  TraceEventFile(const TraceEventFile&) = delete;
  TraceEventFile& operator=(const TraceEventFile&) = delete;

  void name_thread(int tid, std::string_view name);
  // A span on thread `tid`. `name` is plain text (no quotes or backslashes: it is not escaped).
  // Times before the origin are clamped to it, and an end before the start to the start.
  void complete(int tid, std::string_view name, Clock::time_point start, Clock::time_point end,
                std::initializer_list<TraceArg> args = {});
  // Hands what was formatted to the kernel: a crash after this loses none of it.
  void flush();
  // Closes the array and the file. Later calls, and events after it, do nothing.
  void finish();

  int64_t bytes_written() const { return bytes_written_; }

 private:
  void append(std::string_view text);

  int pid_;
  Clock::time_point origin_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<char[]> buffer_;  // kBufferBytes, reused
  size_t used_ = 0;
  int64_t bytes_written_ = 0;
};

}  // namespace dtbench
