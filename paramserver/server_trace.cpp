#include "paramserver/server_trace.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "paramserver/server_clock.h"

namespace dtbench {

namespace {

// Server 0 is the clock the workers of a ps run measured themselves against (server_clock.h). The
// other servers talk to no one they could measure against, so their traces carry the system clock
// only and land among the others as well as the hosts' clocks agree (NTP).
std::optional<ClockAlignment> clock_of_shard(int shard) {
  if (shard != 0) return std::nullopt;
  return ClockAlignment{.reference = kServerZeroClock, .method = "the reference itself"};
}

}  // namespace

std::filesystem::path server_trace_path(const std::filesystem::path& output_dir, int shard) {
  return output_dir / fmt::format("trace-server-{}.json", shard);
}

ServerTrace::ServerTrace(const std::filesystem::path& path, int shard, int64_t max_updates)
    : max_updates_(max_updates),
      file_(path,
            {.pid = kServerTracePidBase + shard,
             .name = fmt::format("server {}", shard),
             .clock = clock_of_shard(shard)},
            TraceEventFile::Clock::now()) {
  file_.name_thread(0, "update thread");
  file_.flush();
}

void ServerTrace::record(const UpdateTiming& update) {
  if (updates_written_ >= max_updates_) return;
  char name[32];
  const auto written = fmt::format_to_n(name, sizeof(name), "update {}", update.version);
  const std::initializer_list<TraceArg> args = {{"version", update.version}, {"gradients", update.gradients}};
  file_.complete(0, {name, std::min(written.size, sizeof(name))}, update.gather_start, update.apply_end, args);
  if (update.gather_start < update.aggregate_start) {
    file_.complete(0, "gather", update.gather_start, update.aggregate_start, args);
  }
  file_.complete(0, "aggregate", update.aggregate_start, update.aggregate_end, args);
  file_.complete(0, "apply", update.apply_start, update.apply_end, args);
  file_.flush();
  // The window is full: close the file now, so it is complete JSON whatever happens to the server later.
  if (++updates_written_ == max_updates_) file_.finish();
}

}  // namespace dtbench
